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

  it('counts and marks what was dropped before it arrived, where it was dropped', () => {
    const output = new CollectedOutput();
    output.push(Buffer.from('HEAD\n'));
    output.pushGap(3_000_000, 50_000);
    output.push(Buffer.from('TAIL\n'));
    expect(output.complete).toBe(false);
    expect(output.byteLength).toBe(3_000_010);
    expect(output.lineCount).toBe(50_002);
    expect(output.tokenCount).toBe(Math.ceil(3_000_010 / 4));
    expect(output.text()).toBe(`HEAD\n…${Math.ceil(3_000_000 / 4)} tokens truncated…TAIL\n`);
    expect(output.truncated(10_000)).toBe(
      `Total output lines: 50002\n\nHEAD\n…${Math.ceil(3_000_000 / 4)} tokens truncated…TAIL\n`,
    );
    // Under a small budget the marker counts what the budget cuts too.
    expect(output.truncated(1)).toBe(
      `Total output lines: 50002\n\nHE…${Math.ceil((3_000_010 - 4) / 4)} tokens truncated…L\n`,
    );
  });

  it("takes a buffer's drained parts with their gap", () => {
    const output = new CollectedOutput();
    output.pushParts({
      head: [Buffer.from('ab')],
      tail: [Buffer.from('yz')],
      omittedBytes: 400,
      omittedNewlines: 4,
    });
    expect(output.text()).toBe('ab…100 tokens truncated…yz');
    expect(output.lineCount).toBe(5);
    const whole = new CollectedOutput();
    whole.pushParts({ head: [Buffer.from('ab')], tail: [], omittedBytes: 0, omittedNewlines: 0 });
    expect(whole.complete).toBe(true);
  });

  it('counts lines as Rust does: a final newline starts none', () => {
    expect(collect('a\nb\n').truncated(0)).toBe('Total output lines: 2\n\n…1 tokens truncated…');
    expect(collect('').truncated(0)).toBe('');
  });
});
