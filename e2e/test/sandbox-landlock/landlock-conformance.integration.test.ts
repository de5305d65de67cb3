import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeConformance, sandboxBackendConformanceChecks } from '@ux/protocol-testing';
import { createLandlockSandbox } from '@ux/sandbox-landlock';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { afterAll, beforeAll } from 'vitest';

// What ABI 3 and later enforce (the probe adds nothing above ABI 3; see the README).
const LANDLOCK_ABI3_ENFORCES = [
  'write_limits',
  'protected_names',
  'read_deny',
  'network_off',
  'private_tmp',
] as const;

// Runs for real: where Landlock or seccomp cannot be loaded these checks fail with the probe's reason.
// The local spawner adds the PTY signal checks (Ctrl-C on a terminal, interrupt() and terminate()).
// The planner checks plan in a directory of their own: by default they make /tmp a writable root, and
// where ux's runtime root is /tmp/ux-<uid> Landlock refuses that plan (it cannot hide the runtime root
// inside a writable /tmp; landlock-plan.test.ts checks the refusal).
const planCwd = mkdtempSync(join(tmpdir(), 'ux-landlock-plan-'));
const backend = createLandlockSandbox();
const spawner = createLocalSpawner();
beforeAll(() => warmUpSpawner(spawner));
useLeakCheck();
afterAll(async () => {
  await backend.close();
  rmSync(planCwd, { recursive: true, force: true });
});
describeConformance(
  'landlock',
  sandboxBackendConformanceChecks(() => backend, {
    run: true,
    spawner,
    planCwd,
    expectEnforces: LANDLOCK_ABI3_ENFORCES,
  }),
);
