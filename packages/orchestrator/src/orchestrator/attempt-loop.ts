import {
  type ApprovalPolicy,
  approvalPolicyName,
  type NetworkApprovalContext,
  SandboxDeniedError,
} from '@ux/protocol/core';
import type { Attempt, AttemptResult, EarlyExit, OrchestratorOutcome, SelectedSandbox } from './attempt.js';

/** The reason shown when asking to rerun a denied command without the sandbox. */
export const RETRY_REASON = 'command failed; retry without sandbox?';

export interface RetryGateInput {
  approvalPolicy: ApprovalPolicy;
  /** The policy denies reads somewhere: running without the sandbox is never allowed. */
  denyRead: boolean;
  /** The command was already approved before the first attempt. */
  alreadyApproved: boolean;
  /** Every approval of this turn goes to the automatic reviewer, retries included. */
  strictAutoReview: boolean;
  /** Whether the tool retries at all after a denial (unified exec: yes). */
  escalateOnFailure: boolean;
  /** The file system is restricted (not unrestricted, not an external sandbox). */
  fileSystemRestricted: boolean;
  /** What the run reported about a network block, if anything. */
  networkDenial?: { context: NetworkApprovalContext | null };
}

export type RetryGateDecision =
  | { retry: false; gate: 'network' | 'escalate' | 'policy' | 'deny_read' }
  | {
      retry: true;
      /** Ask before the retry; `false` when the command was already approved. */
      ask: boolean;
      reason: string;
      /** `same`: rerun in the first sandbox (deny-read); `none`: rerun unsandboxed. */
      sandbox: 'same' | 'none';
      networkContext: NetworkApprovalContext | null;
    };

/**
 * The retry gates after a denial in the early-exit window (docs/reference/orchestrator.md §7), in
 * order: network (a network block without a host to ask about), escalate (the tool does not retry),
 * policy (only untrusted, on-failure and granular with sandbox_approval may ask to drop the sandbox),
 * deny-read (never drop a sandbox that hides files), then whether to ask again, and which sandbox the
 * retry gets.
 */
export function decideRetry(input: RetryGateInput): RetryGateDecision {
  const networkContext = input.networkDenial?.context ?? null;
  if (input.networkDenial && !networkContext) return { retry: false, gate: 'network' };
  if (!input.escalateOnFailure) return { retry: false, gate: 'escalate' };
  const onRequestNetworkPrompt =
    approvalPolicyName(input.approvalPolicy) === 'on-request' &&
    networkContext !== null &&
    input.fileSystemRestricted;
  if (!wantsNoSandboxApproval(input.approvalPolicy) && !onRequestNetworkPrompt)
    return { retry: false, gate: 'policy' };
  if (input.denyRead && !networkContext) return { retry: false, gate: 'deny_read' };
  return {
    retry: true,
    ask: input.strictAutoReview || !input.alreadyApproved || networkContext !== null,
    reason: networkContext
      ? `Network access to "${networkContext.host}" is blocked by policy.`
      : RETRY_REASON,
    sandbox: input.denyRead ? 'same' : 'none',
    networkContext,
  };
}

/** Whether a policy may ask to rerun a denied command without the sandbox. */
export function wantsNoSandboxApproval(policy: ApprovalPolicy): boolean {
  if (typeof policy === 'object') return policy.granular.sandbox_approval;
  return policy === 'untrusted' || policy === 'on-failure';
}

/** What a retry question is about: the gates' reason, the denial, and where the rerun goes. */
export interface RetryQuestion {
  reason: string;
  networkContext: NetworkApprovalContext | null;
  denial: SandboxDeniedError;
  /** `none`: the rerun is unsandboxed; `same`: it stays in the first sandbox (deny-read). */
  sandbox: 'same' | 'none';
}

export interface AttemptLoop<T> {
  firstSandbox: SelectedSandbox | null;
  attempt: Attempt<T>;
  callId: string;
  signal?: AbortSignal;
  gates: Omit<RetryGateInput, 'networkDenial'>;
  /** Whether an early exit in `sandbox` was a denial (the backend's classifier, then the heuristic). */
  isDenial(sandbox: SelectedSandbox, evidence: EarlyExit): boolean;
  /** Asks to retry; throws a rejection unless approved. */
  approveRetry(retry: RetryQuestion): Promise<void>;
}

/**
 * Runs the first attempt and, after a denial in the early-exit window, at most one more, as the gates
 * decide. A second denial is returned as it is; there is never a third attempt.
 */
export async function runAttempts<T>(loop: AttemptLoop<T>): Promise<OrchestratorOutcome<T>> {
  const context = { callId: loop.callId, ...(loop.signal ? { signal: loop.signal } : {}) };
  const first = await loop.attempt(loop.firstSandbox, { attempt: 1, ...context });
  const firstDenial = denial(loop, loop.firstSandbox, first);
  if (!firstDenial)
    return {
      status: 'completed',
      value: first.value,
      sandbox: loop.firstSandbox,
      attempts: 1,
      escalated: false,
    };

  const decision = decideRetry({
    ...loop.gates,
    ...(first.networkDenial ? { networkDenial: first.networkDenial } : {}),
  });
  if (!decision.retry) return { status: 'denied', value: first.value, ...firstDenial, attempts: 1 };
  if (decision.ask)
    await loop.approveRetry({
      reason: decision.reason,
      networkContext: decision.networkContext,
      denial: firstDenial.denial,
      sandbox: decision.sandbox,
    });

  const retrySandbox = decision.sandbox === 'same' ? firstDenial.sandbox : null;
  const second = await loop.attempt(retrySandbox, { attempt: 2, ...context });
  const secondDenial = denial(loop, retrySandbox, second);
  if (secondDenial) return { status: 'denied', value: second.value, ...secondDenial, attempts: 2 };
  return { status: 'completed', value: second.value, sandbox: retrySandbox, attempts: 2, escalated: true };
}

/** A denial only exists for a sandboxed early exit the classifier calls one. */
function denial<T>(
  loop: AttemptLoop<T>,
  sandbox: SelectedSandbox | null,
  result: AttemptResult<T>,
): { denial: SandboxDeniedError; sandbox: SelectedSandbox } | null {
  const exit = result.earlyExit;
  if (!sandbox || !exit || !loop.isDenial(sandbox, exit)) return null;
  return {
    denial: new SandboxDeniedError({
      sandboxType: sandbox.backend.id,
      exitCode: exit.exitCode,
      output: exit.output,
    }),
    sandbox,
  };
}
