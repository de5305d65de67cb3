// The public API: what a host composing the door, or a plugin author writing a permission hook or a
// reviewer, needs. Everything else the package is made of stays behind `@ux/orchestrator/internal`
// (no compatibility promise). The sandbox-denial heuristic is `@ux/protocol`'s (`isSandboxDenial`).

export { absentReviewer } from './approval/absent-reviewer.js';
export { ApprovalAbortedError } from './approval/approval-aborted-error.js';
export { type ApprovalStore, createApprovalStore } from './approval/approval-store.js';
export {
  type CommandPermissionHookSettings,
  createCommandPermissionHook,
} from './approval/command-permission-hook.js';
export { type CommandReviewerSettings, createCommandReviewer } from './approval/command-reviewer.js';
export type {
  PermissionHook,
  PermissionHookDecision,
  PermissionHookRequest,
} from './approval/permission-hook.js';
export type {
  Attempt,
  AttemptContext,
  AttemptResult,
  EarlyExit,
  OrchestratorOutcome,
  SelectedSandbox,
} from './orchestrator/attempt.js';
export {
  createOrchestrator,
  type Orchestrator,
  type OrchestratorRequest,
  type OrchestratorSettings,
} from './orchestrator/create-orchestrator.js';
export type { ExecDecision, ExecDecisionRequest } from './orchestrator/decide-exec.js';
export {
  asksAboutHosts,
  type NetworkDecision,
  type NetworkDecisionRequest,
} from './orchestrator/decide-network.js';
export type { PatchDecision, PatchDecisionRequest } from './orchestrator/decide-patch.js';
export type { DirectoryIdentity, PinnedDirectory } from './orchestrator/pinned-directory.js';
export type { ApprovalRequirement } from './policy/approval-requirement.js';
export {
  createExecPolicy,
  type ExecPolicy,
  type MatchOptions,
  type RuleSet,
} from './policy/exec-policy.js';
export { listRuleFiles, loadRuleFiles } from './policy/load-rule-files.js';
export { everyRuleFileError, parseRulesFile } from './policy/parse-rules-file.js';
export type { Decision, PatternToken, PrefixRule, RuleMatch, RuleSource } from './policy/prefix-rule.js';
export { prefixRuleFromConfig } from './policy/prefix-rule-from-config.js';
export { createRuleFileAppender, type RuleWriter } from './policy/rule-file-appender.js';
export { hasFullDiskWrite, needsSandbox } from './sandbox/needs-sandbox.js';
export {
  type ChosenSandbox,
  createSandboxSelector,
  type SandboxSelector,
  type SandboxSelectorSettings,
} from './sandbox/sandbox-selector.js';
export type { LiteralCommand, ScriptAnalysis } from './shell/analyze-script.js';
export { type BashParser, loadBashParser } from './shell/bash-parser.js';
export { shlexJoin } from './shell/shlex-join.js';
