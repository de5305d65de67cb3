import { describe, expect, it } from 'vitest';
import { utf8SafeLength } from './utf8-boundary.js';

const bytes = (...values: number[]) => Uint8Array.from(values);

describe('utf8SafeLength', () => {
  it('sends everything that ends on a character boundary, up to the cap', () => {
    expect(utf8SafeLength(Buffer.from('hello'), 8192)).toBe(5);
    expect(utf8SafeLength(Buffer.from('hello'), 3)).toBe(3);
    expect(utf8SafeLength(Buffer.from('héllo'), 8192)).toBe(6);
  });

  it('holds back a character the cap would split', () => {
    const euro = Buffer.from('a€b'); // 61 e2 82 ac 62
    expect(utf8SafeLength(euro, 2)).toBe(1);
    expect(utf8SafeLength(euro, 3)).toBe(1);
    expect(utf8SafeLength(euro, 4)).toBe(4);
    const emoji = Buffer.from('x😀'); // 78 f0 9f 98 80
    expect(utf8SafeLength(emoji, 4)).toBe(1);
    expect(utf8SafeLength(emoji, 5)).toBe(5);
  });

  it('holds back an incomplete character at the end, waiting for the rest', () => {
    expect(utf8SafeLength(bytes(0x61, 0xe2, 0x82), 8192)).toBe(1);
    expect(utf8SafeLength(bytes(0xe2, 0x82), 8192)).toBe(0);
  });

  it('lets bytes that are not UTF-8 through instead of stalling', () => {
    expect(utf8SafeLength(bytes(0xff, 0xfe, 0x00), 8192)).toBe(3);
    expect(utf8SafeLength(bytes(0x80, 0x80, 0x80, 0x80, 0x80), 8192)).toBe(5);
    expect(utf8SafeLength(bytes(0xe2, 0x61), 8192)).toBe(2);
  });
});
