import {
  type ApprovalRequest,
  isApproval,
  isReviewDecision,
  NoReviewerError,
  RejectedError,
  type ReviewDecision,
  type Reviewer,
} from '@ux/protocol/core';
import { ApprovalAbortedError } from './approval-aborted-error.js';
import type { ApprovalStore } from './approval-store.js';
import type { PermissionHook, PermissionHookDecision, PermissionHookRequest } from './permission-hook.js';

/** Who may answer, in order: permission hooks, then the automatic reviewer or the user. */
export interface ReviewerChain {
  hooks: readonly PermissionHook[];
  autoReviewer?: Reviewer;
  user: Reviewer;
  /** The session's `approved_for_session` answers (user answers only). */
  store: ApprovalStore;
}

interface ApprovalQuestionBase {
  request: ApprovalRequest;
  reviewer: 'auto' | 'user';
  /** The approval-cache key of the command (`approvalKey`). */
  cacheKey: string;
  signal: AbortSignal;
}

/** What the chain is asked. The hooks' request is needed only when hooks are asked. */
export type ApprovalQuestion = ApprovalQuestionBase &
  (
    | {
        /** `deny_only` for a retry without the sandbox: a hook may refuse it but not grant it. */
        hooks: 'allow_and_deny' | 'deny_only';
        hookRequest: PermissionHookRequest;
      }
    | { hooks: 'skip'; hookRequest?: PermissionHookRequest }
  );

/** The refusal when a person answered no (distinct from "aborted by the user" and "no one could be asked"). */
export const REJECTED_BY_USER = 'rejected by the user';

export const AUTO_REVIEW_TIMEOUT_REASON =
  'the automatic reviewer did not decide in time; that is not a judgement that the command is unsafe: retry it once, or ask the user to approve it';

/**
 * Asks the chain and returns the approving decision, or throws: `RejectedError` for a refusal (source
 * `hook`, `user`, `reviewer`, or `unattended` when the reviewer threw `NoReviewerError`),
 * `ApprovalAbortedError` for `abort`. A hook that denies wins over every other answer. Answers
 * outside `request.available_decisions`, malformed answers and an amendment other than the proposed
 * one count as `denied`, as does a reviewer that throws anything but `NoReviewerError`.
 */
export async function requestApproval(
  chain: ReviewerChain,
  question: ApprovalQuestion,
): Promise<ReviewDecision> {
  if (question.hooks !== 'skip' && chain.hooks.length > 0) {
    const answers: { hook: PermissionHook; answer: PermissionHookDecision }[] = [];
    for (const hook of chain.hooks) {
      let answer: PermissionHookDecision;
      try {
        answer = await hook.check(question.hookRequest, { signal: question.signal });
      } catch (error) {
        answer = { decision: 'deny', message: `permission hook "${hook.id}" failed: ${describe(error)}` };
      }
      answers.push({ hook, answer });
    }
    const denial = answers.find(({ answer }) => answer.decision === 'deny');
    if (denial) {
      const message = denial.answer.decision === 'deny' ? denial.answer.message : undefined;
      throw new RejectedError({
        reason: message ?? `denied by permission hook "${denial.hook.id}"`,
        source: 'hook',
      });
    }
    if (question.hooks === 'allow_and_deny' && answers.some(({ answer }) => answer.decision === 'allow')) {
      return { type: 'approved' };
    }
  }

  const automatic = question.reviewer === 'auto';
  const reviewer = automatic ? chain.autoReviewer : chain.user;
  if (!reviewer) {
    throw new RejectedError({
      reason: 'rejected: automatic review is required for this turn, but no automatic reviewer is configured',
      source: 'reviewer',
    });
  }
  if (!automatic && chain.store.isApprovedForSession(question.cacheKey))
    return { type: 'approved_for_session' };

  const source = automatic ? 'reviewer' : 'user';
  const refused = automatic ? `rejected by the automatic reviewer "${reviewer.id}"` : REJECTED_BY_USER;
  let answer: unknown;
  try {
    answer = await reviewer.review(question.request, { signal: question.signal });
  } catch (error) {
    // Nobody saw the question: say so, rather than report a person's "no" that never happened.
    if (NoReviewerError.isInstance(error))
      throw new RejectedError({ reason: error.message, source: 'unattended' }, { cause: error });
    // An automatic reviewer's refusal with its own rationale (`createCommandReviewer`), as it gave it.
    if (automatic && RejectedError.isInstance(error) && error.source === 'reviewer') throw error;
    throw new RejectedError(
      { reason: `${refused} (the reviewer failed: ${describe(error)})`, source },
      { cause: error },
    );
  }
  const problem = invalidAnswer(answer, question.request);
  if (problem) throw new RejectedError({ reason: `${refused} (${problem})`, source });
  const decision = answer as ReviewDecision;

  if (decision.type === 'abort') throw new ApprovalAbortedError();
  if (decision.type === 'timed_out') throw new RejectedError({ reason: AUTO_REVIEW_TIMEOUT_REASON, source });
  if (!isApproval(decision)) throw new RejectedError({ reason: refused, source });
  if (!automatic && decision.type === 'approved_for_session')
    chain.store.approveForSession(question.cacheKey);
  return decision;
}

/** Why an answer cannot be taken as given, or `undefined` when it can. */
function invalidAnswer(answer: unknown, request: ApprovalRequest): string | undefined {
  if (!isReviewDecision(answer)) return `the answer ${JSON.stringify(answer)} is not a review decision`;
  const decision = answer;
  if (!request.available_decisions.includes(decision.type)) {
    return `the answer "${decision.type}" was not offered; offered: ${request.available_decisions.join(', ')}`;
  }
  if (decision.type === 'approved_execpolicy_amendment') {
    const proposed = request.proposed_execpolicy_amendment;
    if (!proposed || JSON.stringify(proposed) !== JSON.stringify(decision.amendment)) {
      return `the rule ${JSON.stringify(decision.amendment)} is not the proposed ${JSON.stringify(proposed ?? null)}`;
    }
  }
  return undefined;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
