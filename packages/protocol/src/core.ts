// `@ux/protocol/core`: everything of the contract that needs no schema library — errors, policy
// types and the helpers that define what they mean, plugin interfaces, tool definitions. Sandbox
// backends, config readers, `@ux/protocol-utils` and a CLI's sandbox path import this entry, so they
// start without building a single schema. The main entry re-exports all of it.
export {
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
  UnknownPluginError,
  UnknownProcessIdError,
} from './errors/errors.js';
export { markError, UxError } from './errors/ux-error.js';
export { isOp } from './events/is-op.js';
export type { Op } from './events/op.js';
export type {
  BlockedCommand,
  ExecCommandEndEvent,
  ExecCommandSource,
  NetworkAccessEvent,
  PatchChange,
  UxEvent,
} from './events/ux-event.js';
export { decodeBase64, isBase64 } from './exec-server/base64.js';
export type { EnvironmentInfo } from './exec-server/handshake.js';
export { describeWireIssues, invalidWireValue } from './exec-server/invalid-wire-value.js';
export type {
  EnvPolicy,
  ExecParams,
  OutputStream,
  ReadResult,
  StartResult,
  WriteStatus,
} from './exec-server/process-methods.js';
export type { SandboxContext, WireFileSystemEntry, WirePermissions } from './exec-server/sandbox-context.js';
export { UX_EXEC_SERVER_CAPABILITIES } from './exec-server/ux-exec-server-capabilities.js';
export type { RequestId } from './exec-server/wire-envelope.js';
export { WireErrorCode } from './exec-server/wire-error-codes.js';
export {
  type DenyAction,
  type DirectoryIdentity,
  ESCALATION_BROKER_SPECIFICATION_VERSION,
  type EscalateAction,
  type EscalationBroker,
  type EscalationEnv,
  type EscalationSession,
  type ExecAction,
  type ExecContext,
  type ExecHandler,
  type InterceptedExec,
  type RunAction,
  type SpawnEscalation,
} from './plugins/escalation-broker.js';
export {
  checkResizeSize,
  isValidTerminalSize,
  TERMINAL_SIZE_RULE,
} from './plugins/is-valid-terminal-size.js';
export { REVIEWER_SPECIFICATION_VERSION, type Reviewer } from './plugins/reviewer.js';
export {
  type DenialEvidence,
  type DenialVerdict,
  type LaunchPlan,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxEnforcement,
  type SandboxNotice,
  type SandboxPlanRequest,
  type SandboxProbe,
} from './plugins/sandbox-backend.js';
export {
  type PolicyNeed,
  policyNeeds,
  SANDBOX_CAPABILITIES,
  type SandboxCapability,
  unmetNeeds,
} from './plugins/sandbox-capabilities.js';
export {
  type SandboxHostContext,
  type SandboxPlugin,
  type SettingsSchema,
  type SettingsValidation,
  sandboxPluginProblem,
} from './plugins/sandbox-plugin.js';
export {
  type ExecProcess,
  type ExitStatus,
  type OutputSource,
  SPAWNER_SPECIFICATION_VERSION,
  type Spawner,
  type SpawnRequest,
  TERMINATE_GRACE_MS,
  type TerminalSize,
} from './plugins/spawner.js';
export { isAbsolutePath } from './policy/absolute-path.js';
export type { ApprovalPolicy } from './policy/approval-policy.js';
export {
  type ApprovalPolicyName,
  approvalPolicyName,
  approvalPolicyNames,
  granularApprovalConfig,
  granularPromptKinds,
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
export type { ReviewDecision, ReviewDecisionType } from './review/review-decision.js';
export { closeMatches, didYouMean } from './text/close-matches.js';
export type { ExecCommandArgs, ExecCommandVariant } from './tools/exec-command.js';
export type { ExecResult, Refusal, SandboxDenial } from './tools/exec-result.js';
export { EXEC_RESULT_VERSION, type RefusalDecider } from './tools/exec-result-words.js';
export type { ParseResult } from './tools/parse-tool-arguments.js';
export { quickExecCommandArgs, quickShellCommandArgs, quickWriteStdinArgs } from './tools/quick-arguments.js';
export type { ShellCommandArgs } from './tools/shell-command.js';
export {
  execCommandToolDefinition,
  shellCommandToolDefinition,
  type ToolDefinition,
  type ToolName,
  writeStdinToolDefinition,
} from './tools/tool-definitions.js';
export {
  DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  EXEC_COMMAND_DEFAULT_YIELD_TIME_MS,
  MAX_YIELD_TIME_MS,
  MIN_EMPTY_YIELD_TIME_MS,
  MIN_YIELD_TIME_MS,
  WRITE_STDIN_DEFAULT_YIELD_TIME_MS,
} from './tools/tool-limits.js';
export type { WriteStdinArgs } from './tools/write-stdin.js';
