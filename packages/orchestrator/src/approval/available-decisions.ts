import type { ReviewDecisionType } from '@ux/protocol/core';

/**
 * The answers a reviewer may give. Codex offers only approve / save-a-rule / abort; ux also offers
 * `denied` (reject this command, keep the turn going) and `approved_for_session`, which the approval
 * cache needs. Widened sandbox permissions are approved one at a time, never for the session. An
 * automatic reviewer decides one command at a time: it may approve, deny, abort or report `timed_out`,
 * but never approve for the session or save a rule on the user's behalf.
 */
export function availableDecisions(options: {
  additionalPermissions: boolean;
  amendment: boolean;
  network: boolean;
  automatic: boolean;
}): ReviewDecisionType[] {
  if (options.automatic) return ['approved', 'denied', 'abort', 'timed_out'];
  const decisions: ReviewDecisionType[] = ['approved'];
  if (options.network) decisions.push('approved_for_session');
  else if (!options.additionalPermissions) {
    decisions.push('approved_for_session');
    if (options.amendment) decisions.push('approved_execpolicy_amendment');
  }
  decisions.push('denied', 'abort');
  return decisions;
}
