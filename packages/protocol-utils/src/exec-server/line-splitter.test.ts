import { describe, expect, it } from 'vitest';
import { LineSplitter } from './line-splitter.js';

describe('LineSplitter', () => {
  it('gives whole lines across chunk boundaries, without the \\r of a \\r\\n', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(
      100,
      (line) => lines.push(line),
      () => lines.push('<oversized>'),
    );
    splitter.push(Buffer.from('{"a":1}\r\n{"b"'));
    splitter.push(Buffer.from(':2}\n\n日'));
    splitter.push(Buffer.from('本\n'));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '', '日本']);
  });

  it('reports an oversized line once and skips to its end', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(
      4,
      (line) => lines.push(line),
      () => lines.push('<oversized>'),
    );
    splitter.push(Buffer.from('abc'));
    splitter.push(Buffer.from('defgh'));
    splitter.push(Buffer.from('ij\nok\n'));
    expect(lines).toEqual(['<oversized>', 'ok']);
  });
});
