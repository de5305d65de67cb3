import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeConformance, sandboxBackendConformanceChecks } from '@ux/protocol-testing';
import { useLeakCheck } from '@ux/test-utils';
import { afterAll } from 'vitest';
import { createLandlockSandbox } from './create-landlock-sandbox.js';

// The plugin against the contract alone: the protocol's suite, run for real on pipes, the declaration
// pinned (what ABI 3 and later enforce). The same suite with the local spawner's PTY signal checks,
// and at older ABIs, runs in e2e/test/sandbox-landlock/ (this package does not depend on @ux/spawn).
// The planner checks plan in a directory of their own: where ux's runtime root is /tmp/ux-<uid>,
// Landlock refuses a plan that makes /tmp writable (landlock-plan.test.ts checks the refusal).
const planCwd = mkdtempSync(join(tmpdir(), 'ux-landlock-plan-'));
const backend = createLandlockSandbox();
useLeakCheck();
afterAll(async () => {
  await backend.close();
  rmSync(planCwd, { recursive: true, force: true });
});
describeConformance(
  'landlock',
  sandboxBackendConformanceChecks(() => backend, {
    run: true,
    planCwd,
    expectEnforces: ['write_limits', 'protected_names', 'read_deny', 'network_off', 'private_tmp'],
  }),
);
