import { describe, expect, it } from 'vitest';
import { opSchema } from './op.js';

describe('events and ops', () => {
  it('accepts the three ops and nothing else', () => {
    for (const type of ['interrupt', 'clean_background_terminals', 'shutdown']) {
      expect(opSchema.parse({ type })).toEqual({ type });
    }
    expect(opSchema.safeParse({ type: 'kill' }).success).toBe(false);
    expect(opSchema.safeParse({ type: 'interrupt', force: true }).success).toBe(false);
  });
});
