import type { ExecResult } from '@ux/protocol';
import { REFUSAL_NEXT_STEPS } from '@ux/unified-exec';
import { describe, expect, it } from 'vitest';
import { byWhom, mcpToolResult, nobodyAnswered } from './mcp-tool-result.js';

const refused = (decidedBy: 'person' | 'nobody' | 'rule'): ExecResult =>
  ({
    version: 1,
    status: 'refused',
    wall_time_seconds: 0.1,
    refusal: { decided_by: decidedBy, reason: 'no' },
    output: '',
  }) as unknown as ExecResult;

describe('mcpToolResult', () => {
  it('carries the result as structuredContent and its text, marking failures', () => {
    const result = refused('rule');
    expect(mcpToolResult(false, result, 'text')).toEqual({
      content: [{ type: 'text', text: 'text' }],
      structuredContent: result,
      isError: true,
    });
    expect(mcpToolResult(true, result, 'text').isError).toBeUndefined();
  });
});

describe('byWhom', () => {
  it('puts a refusal faster than a person reads down to the client', () => {
    const told = byWhom(refused('person'), { action: 'decline', ms: 40 });
    expect(told.refusal?.decided_by).toBe('client');
    expect(told.refusal?.reason).toContain('"decline" after 40 ms');
    expect(told.next_step).toBe(REFUSAL_NEXT_STEPS.client);
  });

  it('leaves a person’s slow answer, other deciders and calls without an answer alone', () => {
    for (const [result, answer] of [
      [refused('person'), { action: 'cancel' as const, ms: 5000 }],
      [refused('rule'), { action: 'decline' as const, ms: 10 }],
      [refused('person'), undefined],
    ] as const)
      expect(byWhom(result, answer)).toBe(result);
  });
});

describe('nobodyAnswered', () => {
  it('says the person may be away when the inbox question timed out', () => {
    expect(nobodyAnswered(refused('nobody'), 30).next_step).toMatch(/within 30 s \(approval_timeout_s\)/);
    const other = refused('person');
    expect(nobodyAnswered(other, 30)).toBe(other);
    const untimed = refused('nobody');
    expect(nobodyAnswered(untimed, undefined)).toBe(untimed);
  });
});
