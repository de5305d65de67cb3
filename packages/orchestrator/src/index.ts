// The denial heuristic lives in @ux/protocol, so every host (the orchestrator, an exec-server's
// `sandboxDenied`) judges exits alike; re-exported for hosts that use the orchestrator only.
export { type DenialCheck, isLikelySandboxDenied, isSandboxDenial } from '@ux/protocol/core';
export { ApprovalAbortedError } from './approval/approval-aborted-error.js';
export {
  type ApprovalKeyFields,
  type ApprovalStore,
  approvalKey,
  createApprovalStore,
} from './approval/approval-store.js';
export { availableDecisions } from './approval/available-decisions.js';
export { canonicalCommand, SHELL_SCRIPT_MARKER } from './approval/canonical-command.js';
export {
  type CommandPermissionHookSettings,
  createCommandPermissionHook,
} from './approval/command-permission-hook.js';
export type {
  PermissionHook,
  PermissionHookDecision,
  PermissionHookRequest,
} from './approval/permission-hook.js';
export {
  type ApprovalQuestion,
  AUTO_REVIEW_TIMEOUT_REASON,
  type ReviewerChain,
  requestApproval,
} from './approval/request-approval.js';
export type {
  Attempt,
  AttemptContext,
  AttemptResult,
  EarlyExit,
  OrchestratorOutcome,
  SelectedSandbox,
} from './orchestrator/attempt.js';
export {
  type AttemptLoop,
  decideRetry,
  RETRY_REASON,
  type RetryGateDecision,
  type RetryGateInput,
  runAttempts,
  wantsNoSandboxApproval,
} from './orchestrator/attempt-loop.js';
export {
  createOrchestrator,
  type Orchestrator,
  type OrchestratorRequest,
  type OrchestratorSettings,
} from './orchestrator/create-orchestrator.js';
export {
  EXEC_FORBIDDEN,
  type ExecDecision,
  type ExecDecisionRequest,
} from './orchestrator/decide-exec.js';
export {
  asksAboutHosts,
  type NetworkDecision,
  type NetworkDecisionRequest,
} from './orchestrator/decide-network.js';
export {
  PATCH_OUTSIDE_NEVER,
  type PatchDecision,
  type PatchDecisionRequest,
} from './orchestrator/decide-patch.js';
export { escalationPreGate } from './orchestrator/escalation-pre-gate.js';
export {
  type ApprovalRequirement,
  type ApprovalRequirementInput,
  approvalRequirement,
  type ExecRequirement,
  execRequirement,
  GRANULAR_RULES_REASON,
  GRANULAR_SANDBOX_REASON,
  NEVER_PROMPT_REASON,
} from './policy/approval-requirement.js';
export { createExecPolicy, type ExecPolicy, type MatchOptions, type RuleSet } from './policy/exec-policy.js';
export { listRuleFiles, loadRuleFiles } from './policy/load-rule-files.js';
export { parseRulesFile } from './policy/parse-rules-file.js';
export {
  DECISIONS,
  type Decision,
  matchesPattern,
  type PatternToken,
  type PrefixRule,
  type RuleMatch,
  type RuleSource,
  stricterDecision,
} from './policy/prefix-rule.js';
export { prefixRuleFromConfig } from './policy/prefix-rule-from-config.js';
export { createRuleFileAppender, type RuleWriter } from './policy/rule-file-appender.js';
export { isDangerousCommand } from './safety/is-dangerous-command.js';
export { isKnownSafeCommand, isSafeToExec } from './safety/is-known-safe-command.js';
export { isReadOnlyGit } from './safety/is-read-only-git.js';
export { hasFullDiskWrite, needsSandbox } from './sandbox/needs-sandbox.js';
export {
  createSandboxSelector,
  type SandboxSelector,
  type SandboxSelectorSettings,
} from './sandbox/sandbox-selector.js';
export { widenPolicy } from './sandbox/widen-policy.js';
export type { LiteralCommand, ScriptAnalysis } from './shell/analyze-script.js';
export { type BashParser, loadBashParser } from './shell/bash-parser.js';
export { type ShellInvocation, shellInvocation } from './shell/shell-invocation.js';
export { shlexJoin } from './shell/shlex-join.js';
export { shlexSplit } from './shell/shlex-split.js';
