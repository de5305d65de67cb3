export {
  type BwrapHost,
  type BwrapPlan,
  LINUX_MINIMAL_READ_ROOTS,
  launcherArgv,
  planBwrap,
  type SeccompFilterKind,
} from './bwrap-plan.js';
export { classifyBwrapDenial } from './classify-bwrap-denial.js';
export {
  BWRAP_ENFORCES,
  type BwrapSandbox,
  type BwrapSandboxSettings,
  createBwrapSandbox,
  removeThroughDescriptors,
  sweepDeadRuntimeDirs,
} from './create-bwrap-sandbox.js';
export {
  type CreatedRepositories,
  type CreatedRepositoriesOptions,
  findGitTemplateDir,
  type RepositoryScan,
  trackCreatedRepositories,
} from './created-repositories.js';
export { findBwrap } from './find-bwrap.js';
export { checkedNativeBinary, type NativeBinaryName, nativeBinaryPath } from './native-path.js';
export {
  createPathGuard,
  type GuardStopOptions,
  type GuardTarget,
  type GuardWatch,
  type PathGuard,
  type PathGuardOptions,
  QUARANTINE_MAX_BYTES,
  QUARANTINE_MAX_ENTRIES,
  type RepositoryToCheck,
} from './path-guard.js';
export { explainFailure } from './probe-bwrap.js';
export { type BwrapPluginSettings, bwrapSettingsSchema, sandboxPlugin } from './sandbox-plugin.js';
export {
  buildSeccompProgram,
  compileSeccompRules,
  type SeccompNetwork,
  type SeccompProgramOptions,
  type SeccompRule,
  seccompRules,
} from './seccomp/seccomp-program.js';
