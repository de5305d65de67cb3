// `@ux/protocol-testing`: the conformance suites of the plugin interfaces of `@ux/protocol`
// (`describeConformance` registers them with vitest, the host's peer), the process helpers their
// tests share, and a Codex wire fixture. Test code only: no published package imports it at runtime.
export { codexWorkspaceWriteContext } from './codex-workspace-write-context.js';
export { describeConformance } from './describe-conformance.js';
export {
  descendantPids,
  isAlive,
  runToEnd,
  waitForImage,
  waitForOutput,
  waitUntilDead,
} from './process-helpers.js';
export { reviewerConformanceChecks } from './reviewer-conformance.js';
export { sandboxBackendConformanceChecks } from './sandbox-backend-conformance.js';
export { spawnerConformanceChecks } from './spawner-conformance.js';
