// `@ux/protocol/core`: everything of the contract that needs no schema library — errors, policy
// types and the helpers that define what they mean, plugin interfaces, tool definitions. Sandbox
// backends, config readers, `@ux/protocol-utils` and a CLI's sandbox path import this entry, so they
// start without building a single schema. The main entry re-exports all of it.
export {
  type ArgumentIssue,
  ConfigError,
  formatLocation,
  InvalidArgumentsError,
  MissingCommandLineError,
  NoReviewerError,
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
export { isOp } from './events/is-op.js';
export type { Op } from './events/op.js';
export * from './events/ux-event.js';
export { decodeBase64, isBase64 } from './exec-server/base64.js';
export { describeWireIssues, invalidWireValue } from './exec-server/invalid-wire-value.js';
export type {
  EnvPolicy,
  ExecParams,
  OutputStream,
  ReadParams,
  StartResult,
} from './exec-server/process-methods.js';
export type {
  SandboxContext,
  WireFileSystemEntry,
  WirePermissions,
  WireSandboxType,
} from './exec-server/sandbox-context.js';
export { UX_EXEC_SERVER_CAPABILITIES } from './exec-server/ux-exec-server-capabilities.js';
export { WireErrorCode } from './exec-server/wire-error-codes.js';
export {
  checkResizeSize,
  isValidTerminalSize,
  TERMINAL_SIZE_RULE,
} from './plugins/is-valid-terminal-size.js';
export * from './plugins/reviewer.js';
export * from './plugins/sandbox-backend.js';
export * from './plugins/sandbox-capabilities.js';
export * from './plugins/sandbox-plugin.js';
export * from './plugins/spawner.js';
export { isAbsolutePath } from './policy/absolute-path.js';
export type { ApprovalPolicy, GranularApprovalConfig } from './policy/approval-policy.js';
export {
  type ApprovalPolicyName,
  approvalPolicyName,
  approvalPolicyNames,
  type GranularPromptKind,
  granularApprovalConfig,
  granularPromptKinds,
  type SimpleApprovalPolicy,
  simpleApprovalPolicies,
} from './policy/approval-policy-names.js';
export { effectivePolicyFromSandboxPolicy } from './policy/effective-policy-from-sandbox-policy.js';
export type {
  EffectivePolicy,
  FileSystemAccess,
  FileSystemEntry,
  FileSystemPath,
  FileSystemPolicy,
  HostState,
  NetworkPolicy,
  NetworkProxyEndpoint,
  SpecialPathName,
} from './policy/file-system-policy.js';
export { hasDenyRead } from './policy/has-deny-read.js';
export { type SandboxMode, sandboxModes } from './policy/sandbox-modes.js';
export type { AdditionalPermissions, SandboxPermissions } from './policy/sandbox-permissions.js';
export type { SandboxPolicy } from './policy/sandbox-policy.js';
export type { ShellEnvironmentPolicy } from './policy/shell-environment-policy.js';
export { specialPathNames } from './policy/special-path-names.js';
export type { ApprovalRequest, NetworkApprovalContext } from './review/approval-request.js';
export { isApproval } from './review/is-approval.js';
export { isReviewDecision } from './review/is-review-decision.js';
export type {
  NetworkPolicyAmendment,
  ReviewDecision,
  ReviewDecisionType,
} from './review/review-decision.js';
export { closeMatches, didYouMean } from './text/close-matches.js';
export type { ExecCommandArgs, ExecCommandVariant } from './tools/exec-command.js';
export { execCommandParameters } from './tools/exec-command-parameters.js';
export type { ExecResult, Refusal, SandboxDenial } from './tools/exec-result.js';
export {
  EXEC_RESULT_VERSION,
  type ExecResultStatus,
  execResultStatuses,
  type RefusalDecider,
  refusalDeciders,
  type SandboxDenialKind,
  sandboxDenialKinds,
} from './tools/exec-result-words.js';
export type { ParseResult } from './tools/parse-tool-arguments.js';
export {
  quickExecCommandArgs,
  quickShellCommandArgs,
  quickWriteStdinArgs,
} from './tools/quick-arguments.js';
export type { ShellCommandArgs } from './tools/shell-command.js';
export {
  type ExecCommandToolOptions,
  execCommandToolDefinition,
  type JsonSchema,
  shellCommandToolDefinition,
  type ToolDefinition,
  type ToolName,
  writeStdinToolDefinition,
} from './tools/tool-definitions.js';
export * from './tools/tool-limits.js';
export type { WriteStdinArgs } from './tools/write-stdin.js';
