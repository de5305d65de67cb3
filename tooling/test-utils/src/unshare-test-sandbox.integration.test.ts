import { describeConformance, sandboxBackendConformanceChecks } from '@ux/protocol-testing';
import { useLeakCheck } from './leak-check.js';
import { createUnshareTestSandbox } from './unshare-test-sandbox.js';

// Proves the sandbox conformance suite passes on a backend that really restricts, so its failures
// elsewhere mean something. Runs for real: as root on Linux, which is how CI runs.
useLeakCheck();
describeConformance(
  'unshare test sandbox',
  sandboxBackendConformanceChecks(createUnshareTestSandbox, { run: true }),
);
