import type { ReviewDecision } from './review-decision.js';

/** Whether a decision lets the command run. */
export function isApproval(decision: ReviewDecision): boolean {
  switch (decision.type) {
    case 'approved':
    case 'approved_execpolicy_amendment':
    case 'approved_for_session':
      return true;
    case 'network_policy_amendment':
      return decision.amendment.action === 'allow';
    case 'denied':
    case 'timed_out':
    case 'abort':
      return false;
  }
}
