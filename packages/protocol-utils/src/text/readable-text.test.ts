import { describe, expect, it } from 'vitest';
import { readableText, visibleJson } from './readable-text.js';
import { hasInvisibleText, visibleText } from './visible-text.js';

describe('readableText', () => {
  it('leaves a command with backslashes and no invisible character as typed', () => {
    const typed = String.raw`grep 'a\|b' x && printf '\e[1m%s\n' bold`;
    expect(readableText(typed)).toBe(typed);
  });

  it('escapes all of a text that holds an invisible character, backslashes included', () => {
    const forged = 'printf "\\n" #\r\x1b[2K  command: ls';
    expect(readableText(forged)).toBe(visibleText(forged));
    expect(readableText(forged)).toBe('printf "\\\\n" #\\r\\e[2K  command: ls');
    expect(readableText(forged)).not.toMatch(/[\r\x1b]/);
  });

  it('is idempotent, so layers may each apply it', () => {
    for (const text of ['plain \\e', 'a\u202eb\\', '\x1b]0;title\x07', 'x\u200by\r\nz']) {
      const once = readableText(text);
      expect(readableText(once)).toBe(once);
      expect(hasInvisibleText(once)).toBe(false);
    }
  });
});

describe('visibleJson', () => {
  it('is JSON.stringify for ordinary values', () => {
    const value = { host: 'example.org', words: ['ls', '-la', 'é', 'a\\b'], n: 1 };
    expect(visibleJson(value)).toBe(JSON.stringify(value));
  });

  it('escapes C1 controls, bidi overrides and zero-width characters that JSON.stringify keeps raw', () => {
    const value = { path: 'a\u009bb\u202ec\u200bd\u{e0041}', c0: '\x1b\r' };
    const line = visibleJson(value);
    expect(JSON.stringify(value)).toMatch(/[\u009b\u202e]/);
    expect(hasInvisibleText(line)).toBe(false);
    expect(line).toContain('a\\u009bb\\u202ec\\u200bd\\udb40\\udc41');
    expect(JSON.parse(line)).toEqual(value);
  });
});
