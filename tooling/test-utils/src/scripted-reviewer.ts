import {
  type ApprovalRequest,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type Reviewer,
} from '@ux/protocol';

export interface ScriptedReviewer extends Reviewer {
  requests: ApprovalRequest[];
}

/** Answers from a script (the last answer repeats) and records every request. */
export function scriptedReviewer(...answers: ReviewDecision[]): ScriptedReviewer {
  const reviewer: ScriptedReviewer = {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'scripted',
    requests: [],
    async review(request, { signal }) {
      reviewer.requests.push(structuredClone(request));
      if (signal.aborted) return { type: 'abort' };
      return answers[Math.min(reviewer.requests.length - 1, answers.length - 1)] ?? { type: 'denied' };
    },
  };
  return reviewer;
}
