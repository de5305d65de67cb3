import { describe, expect, it } from 'vitest';
import { COLLECTED_KEEP_BYTES, CollectedOutput } from './collected-output.js';
import { formattedTruncate } from './truncate-output.js';

function collect(text: string, chunkSize = 65536): CollectedOutput {
  const output = new CollectedOutput();
  const bytes = Buffer.from(text, 'utf8');
  for (let at = 0; at < bytes.length; at += chunkSize) output.push(bytes.subarray(at, at + chunkSize));
  return output;
}

describe('CollectedOutput', () => {
  it('keeps small output whole and renders it as formattedTruncate does', () => {
    const text = 'token token \n'.repeat(5000);
    const output = collect(text, 1000);
    expect(output.complete).toBe(true);
    expect(output.text()).toBe(text);
    expect(output.tokenCount).toBe(Math.ceil(Buffer.byteLength(text) / 4));
    expect(output.truncated(100)).toBe(formattedTruncate(text, 100));
  });

  it('keeps head and tail of huge output and still renders exactly what the whole would give', () => {
    const lines = Array.from({ length: 120_000 }, (_, i) => `line ${i} ${'é'.repeat(i % 7)}`).join('\n');
    expect(Buffer.byteLength(lines)).toBeGreaterThan(COLLECTED_KEEP_BYTES);
    const output = collect(lines, 4096);
    expect(output.complete).toBe(false);
    expect(output.byteLength).toBe(Buffer.byteLength(lines));
    expect(output.tokenCount).toBe(Math.ceil(Buffer.byteLength(lines) / 4));
    for (const budget of [1, 100, 10_000])
      expect(output.truncated(budget)).toBe(formattedTruncate(lines, budget));
    expect(output.text()).toMatch(
      /^line 0 \nline 1 é\n[\s\S]*…\d+ tokens truncated…[\s\S]*line 119999 é{5}$/,
    );
  });

  it('counts lines as Rust does: a final newline starts none', () => {
    expect(collect('a\nb\n').truncated(0)).toBe('Total output lines: 2\n\n…1 tokens truncated…');
    expect(collect('').truncated(0)).toBe('');
  });
});
