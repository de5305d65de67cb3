import { describe, expect, it } from 'vitest';
import { hasInvisibleText, visibleText } from './visible-text.js';

describe('visibleText', () => {
  it('leaves ordinary text, quotes and non-Latin letters alone', () => {
    const text = `git commit -m "héllo 世界 'ok'" && echo $HOME`;
    expect(visibleText(text)).toBe(text);
    expect(hasInvisibleText(text)).toBe(false);
  });

  it('shows a carriage return and terminal escapes instead of letting them move the cursor', () => {
    const forged = 'touch x #\r\x1b[2K\x1b[1A\x1b[2K  command: ls -la';
    const shown = visibleText(forged);
    expect(shown).toBe('touch x #\\r\\e[2K\\e[1A\\e[2K  command: ls -la');
    expect(shown).not.toMatch(/[\r\x1b]/);
    expect(hasInvisibleText(forged)).toBe(true);
  });

  it('names newlines, tabs, NUL, BEL, DEL and C1 controls', () => {
    expect(visibleText('a\nb\tc\0d\x07e\x7ff\x9bg')).toBe('a\\nb\\tc\\0d\\x07e\\x7ff\\x9bg');
  });

  it('shows bidi overrides, isolates and zero-width characters', () => {
    expect(visibleText('ls \u202egnp.exe')).toBe('ls \\u202egnp.exe');
    expect(visibleText('a\u2066b\u2069c\u200bd\u200de\ufefff')).toBe(
      'a\\u2066b\\u2069c\\u200bd\\u200de\\ufefff',
    );
    expect(visibleText('tag\u{e0041}')).toBe('tag\\u{e0041}');
  });

  it('doubles backslashes so an escape cannot be forged', () => {
    expect(visibleText('echo \\r')).toBe('echo \\\\r');
    expect(visibleText('\r')).not.toBe(visibleText('\\r'));
  });

  it('shows a lone surrogate', () => {
    expect(visibleText('a\udc80b')).toBe('a\\udc80b');
  });
});
