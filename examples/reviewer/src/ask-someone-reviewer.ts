import {
  type ApprovalRequest,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type Reviewer,
} from '@ux/protocol';

export interface AskSomeoneOptions {
  /**
   * Puts the question to someone (a chat message, a web page, a queue) and resolves with their
   * answer. It is given the signal too: stop asking when it aborts.
   */
  ask(question: string, signal: AbortSignal): Promise<'yes' | 'yes for the session' | 'no'>;
}

/**
 * A reviewer that asks someone about each command. What makes it correct is the abort signal: when
 * the turn is interrupted or the door shuts down, `review` settles at once with `abort`, even while
 * the person has not answered (a reviewer that only awaited `ask` would hang the door).
 */
export function createAskSomeoneReviewer(options: AskSomeoneOptions): Reviewer {
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'ask-someone',
    async review(request, { signal }) {
      if (signal.aborted) return { type: 'abort' };
      const aborted = new Promise<'aborted'>((resolve) =>
        signal.addEventListener('abort', () => resolve('aborted'), { once: true }),
      );
      const answer = await Promise.race([options.ask(question(request), signal), aborted]);
      return decision(answer, request);
    },
  };
}

/** The question as a person reads it: the command, where, and why the model wants it. */
function question(request: ApprovalRequest): string {
  const why = request.reason;
  return `Run \`${request.command.join(' ')}\` in ${request.cwd}?${why ? ` (${why})` : ''}`;
}

/** The answer as a decision the request offers (anything else counts as a refusal). */
function decision(answer: string, request: ApprovalRequest): ReviewDecision {
  const offered = (type: ReviewDecision['type']) => request.available_decisions.includes(type);
  if (answer === 'aborted') return { type: 'abort' };
  if (answer === 'yes for the session' && offered('approved_for_session'))
    return { type: 'approved_for_session' };
  if (answer === 'yes' || answer === 'yes for the session') return { type: 'approved' };
  return { type: 'denied' };
}
