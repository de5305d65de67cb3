import { describeConformance, sandboxBackendConformanceChecks } from '@ux/protocol/testing';
import { createBwrapSandbox } from './create-bwrap-sandbox.js';

// Runs for real: on Linux a bwrap that cannot start fails these checks with the probe's reason.
const backend = createBwrapSandbox();
describeConformance(
  'bwrap',
  sandboxBackendConformanceChecks(() => backend, { run: true }),
);
