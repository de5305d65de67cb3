// `@ux/orchestrator/internal`: the parts the orchestrator is made of, for ux's own packages, tests and
// benchmarks. No compatibility promise: any of these may change or go in a minor release. A host needs
// only the main entry (`@ux/orchestrator`).
export {
  type ApprovalKeyFields,
  approvalKey,
} from './approval/approval-store.js';
export { availableDecisions } from './approval/available-decisions.js';
export { canonicalCommand, SHELL_SCRIPT_MARKER } from './approval/canonical-command.js';
export {
  type ApprovalQuestion,
  AUTO_REVIEW_TIMEOUT_REASON,
  type ReviewerChain,
  requestApproval,
} from './approval/request-approval.js';
export {
  type AttemptLoop,
  decideRetry,
  RETRY_REASON,
  type RetryGateDecision,
  type RetryGateInput,
  runAttempts,
  wantsNoSandboxApproval,
} from './orchestrator/attempt-loop.js';
export { EXEC_FORBIDDEN } from './orchestrator/decide-exec.js';
export { PATCH_OUTSIDE_NEVER } from './orchestrator/decide-patch.js';
export { escalationPreGate } from './orchestrator/escalation-pre-gate.js';
export {
  type ApprovalRequirementInput,
  approvalRequirement,
  type ExecRequirement,
  execRequirement,
  GRANULAR_RULES_REASON,
  GRANULAR_SANDBOX_REASON,
  NEVER_PROMPT_REASON,
} from './policy/approval-requirement.js';
export { DECISIONS, matchesPattern, stricterDecision } from './policy/prefix-rule.js';
export { isDangerousCommand } from './safety/is-dangerous-command.js';
export { isKnownSafeCommand, isSafeToExec } from './safety/is-known-safe-command.js';
export { isReadOnlyGit } from './safety/is-read-only-git.js';
export { hasFullDiskWrite, needsSandbox } from './sandbox/needs-sandbox.js';
export { widenPolicy } from './sandbox/widen-policy.js';
export { type ShellInvocation, shellInvocation } from './shell/shell-invocation.js';
export { shlexSplit } from './shell/shlex-split.js';
