import type { ReviewDecision } from './review-decision.js';

const PLAIN = new Set(['approved', 'approved_for_session', 'denied', 'timed_out', 'abort']);

/**
 * Whether a value is a review decision, as `reviewDecisionSchema` accepts it (checked against it in
 * the tests), without zod: a reviewer's answer is checked on every approval.
 */
export function isReviewDecision(value: unknown): value is ReviewDecision {
  if (!isRecord(value) || !Object.hasOwn(value, 'type')) return false;
  const { type } = value;
  const keys = Object.keys(value);
  if (typeof type === 'string' && PLAIN.has(type)) return keys.length === 1;
  if (keys.length !== 2 || !Object.hasOwn(value, 'amendment')) return false;
  const { amendment } = value;
  if (type === 'approved_execpolicy_amendment') {
    return (
      Array.isArray(amendment) && amendment.length > 0 && amendment.every((part) => typeof part === 'string')
    );
  }
  if (type === 'network_policy_amendment') {
    return (
      isRecord(amendment) &&
      Object.keys(amendment).length === 2 &&
      Object.hasOwn(amendment, 'host') &&
      Object.hasOwn(amendment, 'action') &&
      typeof amendment.host === 'string' &&
      amendment.host.length > 0 &&
      (amendment.action === 'allow' || amendment.action === 'deny')
    );
  }
  return false;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
