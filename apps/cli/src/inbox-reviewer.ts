import type { ApprovalsVia } from '@ux/config';
import {
  NoReviewerError,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type Reviewer,
} from '@ux/protocol/core';
import { type ApprovalInbox, TIMED_OUT } from './approval-inbox.js';

/** Who a question for a person goes to: the MCP client (elicitation), the inbox, or nobody. */
export type ApprovalRoute = 'client' | 'inbox' | 'nobody';

/**
 * `approvals_via` and whether the MCP client declared elicitation: `client` asks the client only
 * (nobody when it cannot be asked), `inbox` always the inbox, `client-then-inbox` the client when it
 * can be asked, else the inbox.
 */
export function approvalRoute(via: ApprovalsVia, clientElicits: boolean): ApprovalRoute {
  if (via === 'inbox') return 'inbox';
  if (clientElicits) return 'client';
  return via === 'client' ? 'nobody' : 'inbox';
}

/** What the model reads when nobody answered in time (the `NoReviewerError` reason). */
export function nobodyAnsweredReason(seconds: number): string {
  return `nobody answered within ${seconds} s: the question waited in the approvals inbox (\`ux approvals\`) and was withdrawn (approval_timeout_s = ${seconds})`;
}

/**
 * Puts each question in `inbox` and waits for a person to answer it with `ux approvals` (another
 * terminal, through the control socket), for the call to be cancelled (abort), or for
 * `timeoutSeconds`: then the command is refused as unattended, "nobody answered within N s".
 * `unreachable()` says why nobody can reach the inbox (its control socket did not start): the
 * question is then refused at once, never left waiting where nobody can see it.
 */
export function createInboxReviewer(
  inbox: ApprovalInbox,
  options: {
    timeoutSeconds?: number | null;
    unreachable?: () => string | undefined;
    /** Told when a question timed out (the MCP server rewrites the model's next step). */
    onTimeout?: (callId: string, seconds: number) => void;
  } = {},
): Reviewer {
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'inbox',
    async review(request, { signal }): Promise<ReviewDecision> {
      const why = options.unreachable?.();
      if (why !== undefined) throw new NoReviewerError(`the approvals inbox cannot be reached: ${why}`);
      const seconds = options.timeoutSeconds ?? undefined;
      const answer = await inbox.ask(request, {
        signal,
        ...(seconds === undefined ? {} : { timeoutMs: seconds * 1000 }),
      });
      if (answer === TIMED_OUT) {
        options.onTimeout?.(request.call_id, seconds!);
        throw new NoReviewerError(nobodyAnsweredReason(seconds!));
      }
      return answer;
    },
  };
}

/**
 * `client-then-inbox` with a client that can be asked: the client first; when it refuses
 * automatically (`isAutomaticRefusal`: a `decline`/`cancel` too fast for a person) or cannot answer
 * at all (`NoReviewerError`), the same question goes to the inbox, and so does every later one (the
 * client has shown that it answers for itself). `onSwitch` is told once, when that happens.
 */
export function clientThenInboxReviewer(
  client: Reviewer,
  inbox: Reviewer,
  isAutomaticRefusal: (callId: string) => boolean,
  onSwitch?: (why: string) => void,
): Reviewer {
  let clientAnswersItself = false;
  const toInbox = (why: string) => {
    if (clientAnswersItself) return;
    clientAnswersItself = true;
    onSwitch?.(why);
  };
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'client-then-inbox',
    async review(request, options): Promise<ReviewDecision> {
      if (clientAnswersItself) return inbox.review(request, options);
      let decision: ReviewDecision;
      try {
        decision = await client.review(request, options);
      } catch (error) {
        if (options.signal.aborted || !NoReviewerError.isInstance(error)) throw error;
        toInbox(`the MCP client could not answer: ${error.reason}`);
        return inbox.review(request, options);
      }
      if (options.signal.aborted || !isAutomaticRefusal(request.call_id)) return decision;
      toInbox('the MCP client answers approval questions itself, too fast for a person');
      return inbox.review(request, options);
    },
  };
}
