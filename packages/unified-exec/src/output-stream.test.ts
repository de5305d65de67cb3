import type { ExecProcess } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { LAST_OUTPUT_KEEP_BYTES, OutputStream } from './output-stream.js';

/** Just enough of a process to feed output to a stream; it never exits. */
function feeder() {
  let listener: ((chunk: Uint8Array) => void) | undefined;
  const process = {
    onOutput(fn: (chunk: Uint8Array) => void) {
      listener = fn;
      return () => undefined;
    },
    closed: new Promise<void>(() => undefined),
    exited: new Promise(() => undefined),
  } as unknown as ExecProcess;
  return {
    process,
    push: (text: string | Uint8Array) => listener?.(typeof text === 'string' ? Buffer.from(text) : text),
  };
}

describe('OutputStream for people watching', () => {
  it('keeps the last lines of the latest output and when it came', () => {
    const { process, push } = feeder();
    const stream = new OutputStream(process, () => undefined);
    expect(stream.lastLines(3)).toEqual([]);
    expect(stream.lastOutputAt).toBeUndefined();
    push('one\ntwo\r\nthree\nfour\n');
    push('>>> ');
    expect(stream.lastLines(3)).toEqual(['three', 'four', '>>> ']);
    expect(stream.lastLineOpen).toBe(true);
    push('\n');
    expect(stream.lastLineOpen).toBe(false);
    expect(stream.lastLines(1)).toEqual(['>>> ']);
    expect(stream.lastLines(0)).toEqual([]);
    expect(stream.lastOutputAt).toBeTypeOf('number');
  });

  it('keeps at most 4 KiB, cut at a character', () => {
    const { process, push } = feeder();
    const stream = new OutputStream(process, () => undefined);
    push('é'.repeat(LAST_OUTPUT_KEEP_BYTES));
    const [line] = stream.lastLines(1);
    expect(line).not.toContain('\ufffd');
    expect(Buffer.byteLength(line ?? '')).toBeLessThanOrEqual(LAST_OUTPUT_KEEP_BYTES);
    expect(Buffer.byteLength(line ?? '')).toBeGreaterThan(LAST_OUTPUT_KEEP_BYTES - 4);
  });

  it('hands every piece to watchers beyond the per-call delta cap, until they stop', () => {
    const { process, push } = feeder();
    let deltas = 0;
    const stream = new OutputStream(process, () => deltas++);
    const seen: string[] = [];
    const stop = stream.watch((chunk) => seen.push(Buffer.from(chunk).toString()));
    for (let i = 0; i < 10_005; i++) push('x');
    expect(deltas).toBe(10_000);
    expect(seen.length).toBe(10_005);
    stop();
    push('after');
    expect(seen.length).toBe(10_005);
  });
});
