import { describeConformance, sandboxBackendConformanceChecks } from '@ux/protocol-testing';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { afterAll, beforeAll } from 'vitest';

// Runs for real: on Linux a bwrap that cannot start fails these checks with the probe's reason. Every
// capability bwrap declares is checked by running commands (writes outside the roots, protected names,
// deny-read, network off, unix sockets, the proxy, private /tmp, host processes), and always keepFds and
// signals; the local spawner adds the PTY signal checks (Ctrl-C on a terminal, interrupt() and terminate()).
// `expectEnforces` pins the declaration, so a capability dropped from the probe fails here instead of
// quietly skipping its checks. Not resource limits: bwrap sets none.
const backend = createBwrapSandbox();
const spawner = createLocalSpawner();
beforeAll(() => warmUpSpawner(spawner));
useLeakCheck();
afterAll(() => backend.close());
describeConformance(
  'bwrap',
  sandboxBackendConformanceChecks(() => backend, {
    run: true,
    spawner,
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
