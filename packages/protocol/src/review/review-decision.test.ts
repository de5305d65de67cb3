import { describe, expect, it } from 'vitest';
import { isApproval } from './is-approval.js';
import { reviewDecisionSchema } from './review-decision.js';

describe('review decisions', () => {
  it.each([
    [{ type: 'approved' }, true],
    [{ type: 'approved_execpolicy_amendment', amendment: ['git', 'pull'] }, true],
    [{ type: 'approved_for_session' }, true],
    [{ type: 'network_policy_amendment', amendment: { host: 'example.com', action: 'allow' } }, true],
    [{ type: 'network_policy_amendment', amendment: { host: 'example.com', action: 'deny' } }, false],
    [{ type: 'denied' }, false],
    [{ type: 'timed_out' }, false],
    [{ type: 'abort' }, false],
  ] as const)('%j lets the command run: %s', (decision, expected) => {
    expect(isApproval(reviewDecisionSchema.parse(decision))).toBe(expected);
  });

  it('rejects an empty amendment and unknown decisions', () => {
    expect(
      reviewDecisionSchema.safeParse({ type: 'approved_execpolicy_amendment', amendment: [] }).success,
    ).toBe(false);
    expect(reviewDecisionSchema.safeParse({ type: 'maybe' }).success).toBe(false);
  });
});
