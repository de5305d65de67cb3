/**
 * `@ux/sandbox-bwrap/linux`: the Linux pieces of this backend that do not depend on bubblewrap, for
 * other Linux backends (`@ux/sandbox-landlock`) to share rather than copy: the seccomp program, the path
 * guard that takes away protected names a command creates, the check of repositories a command
 * created, the remover that goes through descriptors, and where this package's native programs are.
 */
export {
  expandGlobs,
  globBases,
  LINUX_MINIMAL_READ_ROOTS,
  type ResolvedWay,
  resolveWay,
} from './bwrap-plan.js';
export { removeThroughDescriptors } from './create-bwrap-sandbox.js';
export {
  type CreatedRepositories,
  findGitTemplateDir,
  type RepositoryScan,
  trackCreatedRepositories,
} from './created-repositories.js';
export { type GuardedPlanInput, guardedLaunchPlan } from './guarded-launch-plan.js';
export { checkedNativeBinary, type NativeBinaryName, nativeBinaryPath } from './native-path.js';
export {
  createPathGuard,
  type GuardStopOptions,
  type GuardTarget,
  type GuardWatch,
  type PathGuard,
  type PathGuardOptions,
} from './path-guard.js';
export { planFsView } from './plan-fs-view.js';
export {
  buildSeccompProgram,
  hostSeccompArch,
  type SeccompNetwork,
  type SeccompProgramOptions,
} from './seccomp/seccomp-program.js';
export type { SeccompArch } from './seccomp/syscalls.js';
