import { describe, expect, it } from 'vitest';
import { approxTokenCount, countLines, formattedTruncate } from './truncate-output.js';

describe('formattedTruncate', () => {
  it('leaves output within the budget alone', () => {
    expect(formattedTruncate('hello\n', 2)).toBe('hello\n');
    expect(formattedTruncate('12345678', 2)).toBe('12345678');
  });

  it('matches the worked example: 999 lines of 36 bytes at 50 tokens', () => {
    const lines = Array.from(
      { length: 999 },
      (_, i) => `line ${String(i).padStart(4, '0')} ${'x'.repeat(25)}\n`,
    );
    const text = lines.join('');
    expect(Buffer.byteLength(text)).toBe(999 * 36);
    expect(approxTokenCount(text)).toBe(8991);
    const truncated = formattedTruncate(text, 50);
    expect(truncated.startsWith('Total output lines: 999\n\n')).toBe(true);
    expect(truncated).toContain('…8941 tokens truncated…');
    const [head, tail] = truncated
      .slice('Total output lines: 999\n\n'.length)
      .split('…8941 tokens truncated…');
    expect(Buffer.byteLength(head!)).toBe(100);
    expect(Buffer.byteLength(tail!)).toBe(100);
    expect(head).toBe(text.slice(0, 100));
    expect(tail).toBe(text.slice(-100));
  });

  it('never cuts a character in two', () => {
    const text = 'é'.repeat(100);
    const truncated = formattedTruncate(text, 5);
    expect(truncated).toBe(`Total output lines: 1\n\n${'é'.repeat(5)}…45 tokens truncated…${'é'.repeat(5)}`);
  });

  it('keeps whole repeats at both ends of a large summary', () => {
    const text = 'token token \n'.repeat(5000);
    const truncated = formattedTruncate(text, 100);
    expect(truncated).toMatch(
      /^Total output lines: 5000\n\n(token token \n){5,}.*…\d+ tokens truncated….*(token token \n){5,}$/s,
    );
  });

  it('counts lines as a final newline does not start one', () => {
    expect(countLines('')).toBe(0);
    expect(countLines('a')).toBe(1);
    expect(countLines('a\n')).toBe(1);
    expect(countLines('a\nb')).toBe(2);
    expect(countLines('a\n\n')).toBe(2);
  });
});
