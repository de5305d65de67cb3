import type { Op } from './op.js';

const OP_TYPES = new Set(['interrupt', 'clean_background_terminals', 'shutdown']);

/** Whether a value is an op, as `opSchema` accepts it (checked against it in the tests), without zod. */
export function isOp(value: unknown): value is Op {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype) {
    return false;
  }
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === 'type' && OP_TYPES.has((value as { type: unknown }).type as string);
}
