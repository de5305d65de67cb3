export {
  type ArgumentIssue,
  ConfigError,
  formatLocation,
  InvalidArgumentsError,
  MissingCommandLineError,
  RejectedError,
  type RejectionSource,
  SandboxDeniedError,
  SandboxUnavailableError,
  SpawnFailedError,
  StdinClosedError,
  type StdinClosedReason,
  UnknownPluginError,
  UnknownProcessIdError,
} from './errors/errors.js';
export { markError, UxError, type UxErrorCode } from './errors/ux-error.js';
export { type Op, opSchema } from './events/op.js';
export * from './events/ux-event.js';
export { decodeBase64, isBase64 } from './exec-server/base64.js';
export * from './exec-server/exec-server-methods.js';
export * from './exec-server/fs-methods.js';
export * from './exec-server/handshake.js';
export * from './exec-server/process-methods.js';
export * from './exec-server/sandbox-context.js';
export * from './exec-server/wire-envelope.js';
export { WireErrorCode } from './exec-server/wire-error-codes.js';
export {
  type BackendFailure,
  firstAvailableBackend,
  probeSafely,
} from './plugins/first-available-backend.js';
export * from './plugins/reviewer.js';
export * from './plugins/sandbox-backend.js';
export { type DenialCheck, isLikelySandboxDenied, isSandboxDenial } from './plugins/sandbox-denial.js';
export { createSandboxRegistry, type SandboxRegistry } from './plugins/sandbox-registry.js';
export * from './plugins/spawner.js';
export { isAbsolutePath } from './policy/absolute-path.js';
export * from './policy/approval-policy.js';
export { effectivePolicyFromSandboxPolicy } from './policy/effective-policy-from-sandbox-policy.js';
export * from './policy/file-system-policy.js';
export { type FsView, memoryFsView, nodeFsView } from './policy/fs-view.js';
export { globToRegExp } from './policy/glob-to-regexp.js';
export {
  gitdirTarget,
  PROTECTED_METADATA_DIRS,
  type ProtectedPath,
  type ProtectedPathsOptions,
  protectedPaths,
  SHELL_STARTUP_FILES,
  USER_CONFIG_PATHS,
} from './policy/protected-paths.js';
export {
  type PolicyContext,
  type ResolvedEntry,
  resolveAccess,
  resolveEntries,
} from './policy/resolve-access.js';
export {
  canonicalize,
  isUnder,
  resolveSandboxLayout,
  type SandboxLayout,
  type WritableRootLayout,
} from './policy/sandbox-layout.js';
export * from './policy/sandbox-permissions.js';
export * from './policy/sandbox-policy.js';
export type { ApprovalRequest, NetworkApprovalContext } from './review/approval-request.js';
export * from './review/review-decision.js';
export { closeMatches, didYouMean } from './text/close-matches.js';
export * from './tools/exec-command.js';
export * from './tools/exec-result.js';
export * from './tools/parse-tool-arguments.js';
export * from './tools/shell-command.js';
export * from './tools/tool-definitions.js';
export * from './tools/tool-limits.js';
export * from './tools/write-stdin.js';
