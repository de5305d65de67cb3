import type { ApprovalRequest } from '../review/approval-request.js';
import type { ReviewDecision } from '../review/review-decision.js';

export const REVIEWER_SPECIFICATION_VERSION = 'ux-reviewer-v1';

/**
 * Answers approval requests: a person in a terminal, an MCP client through elicitation, or an
 * automatic reviewer. It must answer with one of `request.available_decisions` and, when `signal`
 * aborts, settle promptly with `abort`.
 */
export interface Reviewer {
  readonly specificationVersion: typeof REVIEWER_SPECIFICATION_VERSION;
  readonly id: string;
  review(request: ApprovalRequest, options: { signal: AbortSignal }): Promise<ReviewDecision>;
}
