import { describeConformance, sandboxBackendConformanceChecks } from '@ux/protocol/testing';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { afterAll, beforeAll } from 'vitest';
import { createBwrapSandbox } from './create-bwrap-sandbox.js';

// Runs for real: on Linux a bwrap that cannot start fails these checks with the probe's reason. The
// local spawner adds the PTY signal checks (Ctrl-C on a terminal, interrupt() and terminate()).
const backend = createBwrapSandbox();
const spawner = createLocalSpawner();
beforeAll(() => warmUpSpawner(spawner));
useLeakCheck();
afterAll(() => backend.close());
describeConformance(
  'bwrap',
  sandboxBackendConformanceChecks(() => backend, { run: true, spawner }),
);
