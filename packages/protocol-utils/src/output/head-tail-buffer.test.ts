import { describe, expect, it } from 'vitest';
import { HeadTailBuffer } from './head-tail-buffer.js';

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);

describe('HeadTailBuffer', () => {
  it('keeps the head and the tail when over budget: "0123456789" + "ab" at max 10', () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(bytes('0123456789'));
    expect(buffer.omittedBytes).toBe(0);
    buffer.push(bytes('ab'));
    expect(text(buffer.snapshot())).toBe('01234789ab');
    expect(buffer.omittedBytes).toBe(2);
    expect(buffer.retainedBytes).toBe(10);
  });

  it('fills the head across chunks, then the tail, then drops the oldest tail byte: "012346789a"', () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(bytes('01'));
    buffer.push(bytes('234'));
    expect(text(buffer.snapshot())).toBe('01234');
    buffer.push(bytes('567'));
    buffer.push(bytes('89'));
    expect(text(buffer.snapshot())).toBe('0123456789');
    expect(buffer.omittedBytes).toBe(0);
    buffer.push(bytes('a'));
    expect(text(buffer.snapshot())).toBe('012346789a');
    expect(buffer.omittedBytes).toBe(1);
  });

  it('drops everything at max 0', () => {
    const buffer = new HeadTailBuffer(0);
    buffer.push(bytes('abc'));
    expect(buffer.retainedBytes).toBe(0);
    expect(buffer.omittedBytes).toBe(3);
    expect(text(buffer.snapshot())).toBe('');
  });

  it('keeps only the last byte when the head budget is 0 (max 1)', () => {
    const buffer = new HeadTailBuffer(1);
    buffer.push(bytes('abc'));
    expect(text(buffer.snapshot())).toBe('c');
    expect(buffer.retainedBytes).toBe(1);
    expect(buffer.omittedBytes).toBe(2);
  });

  it('keeps only the end of a chunk larger than the tail budget, replacing the old tail', () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(bytes('0123456789'));
    buffer.push(bytes('ABCDEFGHIJK'));
    expect(text(buffer.snapshot())).toBe('01234GHIJK');
    expect(buffer.omittedBytes).toBe(5 + 6);
  });

  it('drains in order and resets everything, including the omitted count', () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(bytes('0123456789'));
    buffer.push(bytes('ab'));
    expect(text(buffer.drain())).toBe('01234789ab');
    expect(buffer.retainedBytes).toBe(0);
    expect(buffer.omittedBytes).toBe(0);
    expect(text(buffer.snapshot())).toBe('');
    buffer.push(bytes('xyz'));
    expect(text(buffer.snapshot())).toBe('xyz');
  });

  it('stays bounded for many tiny and empty chunks', () => {
    const buffer = new HeadTailBuffer(10);
    for (const char of '0123456789ab') {
      buffer.push(new Uint8Array());
      buffer.push(bytes(char));
    }
    expect(text(buffer.snapshot())).toBe('01234789ab');
    expect(buffer.retainedBytes).toBe(10);
    expect(buffer.omittedBytes).toBe(2);
  });

  it('does not let later pushes change an earlier snapshot', () => {
    const buffer = new HeadTailBuffer(4);
    const chunk = bytes('ab');
    buffer.push(chunk);
    const snapshot = buffer.snapshot();
    chunk[0] = 0x7a;
    buffer.push(bytes('cd'));
    expect(text(snapshot)).toBe('ab');
  });

  it('keeps 512 KiB of head and tail of a 3 MiB stream at the 1 MiB cap', () => {
    const buffer = new HeadTailBuffer(1024 * 1024);
    for (let i = 0; i < 48; i++) buffer.push(new Uint8Array(64 * 1024).fill(i));
    const kept = buffer.snapshot();
    expect(kept.length).toBe(1024 * 1024);
    expect(kept[0]).toBe(0);
    expect(kept[512 * 1024 - 1]).toBe(7);
    expect(kept[512 * 1024]).toBe(40);
    expect(kept.at(-1)).toBe(47);
    expect(buffer.omittedBytes).toBe(2 * 1024 * 1024);
  });

  it('counts the newlines it drops, and gives head and tail apart with the gap', () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(bytes('01234'));
    buffer.push(bytes('a\nb\nc\n'));
    buffer.push(bytes('XYZ\nW'));
    const parts = buffer.parts();
    expect(parts.head.map(text).join('')).toBe('01234');
    // 'a' went when the tail first filled, then '\nb\nc\n' when 'XYZ\nW' replaced it.
    expect(parts.tail.map(text).join('')).toBe('XYZ\nW');
    expect(parts.omittedBytes).toBe(6);
    expect(parts.omittedNewlines).toBe(3);
    expect(buffer.drainParts().omittedNewlines).toBe(3);
    expect(buffer.omittedNewlines).toBe(0);
  });

  it('keeps a gap recorded upstream between head and tail, closing the head', () => {
    const buffer = new HeadTailBuffer(10);
    buffer.push(bytes('ab'));
    buffer.pushGap(1000, 7);
    buffer.push(bytes('cd'));
    const parts = buffer.parts();
    expect(parts.head.map(text).join('')).toBe('ab');
    expect(parts.tail.map(text).join('')).toBe('cd');
    expect(parts).toMatchObject({ omittedBytes: 1000, omittedNewlines: 7 });
    buffer.drainParts();
    buffer.push(bytes('ef'));
    expect(buffer.parts().head.map(text).join('')).toBe('ef');
  });

  it('rejects a negative or fractional size', () => {
    expect(() => new HeadTailBuffer(-1)).toThrow('maxBytes must be a non-negative integer, got -1');
    expect(() => new HeadTailBuffer(1.5)).toThrow('maxBytes must be a non-negative integer, got 1.5');
  });
});
