export { codexWorkspaceWriteContext } from './codex-workspace-write-context.js';
export {
  type ConformanceCheck,
  ConformanceFailure,
  type ConformanceOutcome,
  ConformanceSkip,
  check,
  checkEqual,
  rejection,
  runConformanceChecks,
  within,
} from './conformance-check.js';
export { describeConformance } from './describe-conformance.js';
export {
  descendantPids,
  isAlive,
  runToEnd,
  waitForImage,
  waitForOutput,
  waitUntilDead,
} from './process-helpers.js';
export { type ReviewerConformanceOptions, reviewerConformanceChecks } from './reviewer-conformance.js';
export {
  type SandboxBackendConformanceOptions,
  sandboxBackendConformanceChecks,
} from './sandbox-backend-conformance.js';
export { sandboxSignalChecks, type WithPlan } from './sandbox-signal-checks.js';
export { type SpawnerConformanceOptions, spawnerConformanceChecks } from './spawner-conformance.js';
