import { type ApprovalPolicy, approvalPolicyName, type Reviewer } from '@ux/protocol/core';

/**
 * Who answers a question the chain is asked: the automatic reviewer under strict automatic review,
 * or when one is set and the policy is `on-request` or `granular` (Codex's `approvals_reviewer =
 * auto_review`); the user otherwise.
 */
export function reviewRoute(input: {
  strictAutoReview: boolean;
  autoReviewer: Reviewer | undefined;
  approvalPolicy: ApprovalPolicy;
}): 'auto' | 'user' {
  if (input.strictAutoReview) return 'auto';
  const routed =
    input.autoReviewer !== undefined &&
    ['on-request', 'granular'].includes(approvalPolicyName(input.approvalPolicy));
  return routed ? 'auto' : 'user';
}
