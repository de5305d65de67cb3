// @ux/zsh-fork: the zsh patch and its build, the execve wrapper and the escalation broker.

// The escalation broker and the execve wrapper's paths (restored here after the build exports were
// added; owned by the broker's author).
export type {
  DenyAction,
  DirectoryIdentity,
  EscalateAction,
  ExecAction,
  ExecContext,
  ExecHandler,
  InterceptedExec,
  RunAction,
} from './broker/exec-handler.js';
export {
  checkedNativePath,
  defaultBrokerPath,
  defaultWrapperPath,
  nativeBinaryPath,
  type ZshForkNativeBinary,
} from './broker/native-binary-path.js';
export {
  type EscalationBroker,
  type EscalationEnv,
  type EscalationSession,
  type StartEscalationBrokerOptions,
  startEscalationBroker,
} from './broker/start-escalation-broker.js';
export { BUILD_INFO_FILE, readBuildInfo, type ZshForkBuildInfo } from './build/build-info.js';
export { type BuildZshForkOptions, buildZshFork, type ZshForkBuild } from './build/build-zsh-fork.js';
export {
  availableZshSource,
  cachedZshForkPath,
  currentZshForkCache,
  type EnsureZshForkCacheOptions,
  ensureZshForkCache,
  type ZshForkCache,
  zshForkCacheDir,
  zshSourceCacheDir,
} from './build/ensure-zsh-fork-cache.js';
export {
  describeZshSourceFetch,
  type FetchDebianZshSourceOptions,
  fetchDebianZshSource,
  findDsc,
  type PlanZshSourceFetchOptions,
  planZshSourceFetch,
  type ZshSourceFetchPlan,
} from './build/fetch-debian-zsh-source.js';
export { type FetchZshSourceStepOptions, fetchZshSourceStep } from './build/fetch-zsh-source-step.js';
export {
  defaultZshForkDir,
  type LocateZshForkOptions,
  locateZshFork,
  type ZshForkLocation,
} from './build/locate-zsh-fork.js';
export { SOURCE_KINDS_TEXT, sourceKind, type ZshSourceKind } from './build/source-kind.js';
export {
  type VerifyZshForkOptions,
  verifyZshFork,
  type ZshForkVerification,
} from './build/verify-zsh-fork.js';
export {
  BUILD_WITH_SOURCE_COMMAND,
  type BuildHintContext,
  passSourceFix,
  ZSH_TARBALL_URL,
  zshForkBuildHint,
} from './build/zsh-download-hint.js';
export {
  ZshForkBuildError,
  type ZshForkBuildErrorFields,
  type ZshForkBuildReason,
} from './build/zsh-fork-build-error.js';
export { type ZshForkPatch, zshForkPatch } from './build/zsh-fork-patch.js';
