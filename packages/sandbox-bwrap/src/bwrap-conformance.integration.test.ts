import { describeConformance, sandboxBackendConformanceChecks } from '@ux/protocol-testing';
import { useLeakCheck } from '@ux/test-utils';
import { afterAll } from 'vitest';
import { createBwrapSandbox } from './create-bwrap-sandbox.js';

// The plugin against the contract alone: the protocol's suite, run for real on pipes, with the
// declaration pinned by `expectEnforces` so a capability dropped from the probe fails here instead of
// quietly skipping its checks. The same suite with the local spawner's PTY signal checks runs in
// e2e/test/sandbox-bwrap/ (this package does not depend on @ux/spawn).
const backend = createBwrapSandbox();
useLeakCheck();
afterAll(() => backend.close());
describeConformance(
  'bwrap',
  sandboxBackendConformanceChecks(() => backend, {
    run: true,
    expectEnforces: [
      'write_limits',
      'protected_names',
      'read_deny',
      'network_off',
      'network_by_domain',
      'unix_socket_control',
      'private_tmp',
      'process_isolation',
    ],
  }),
);
