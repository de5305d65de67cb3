import { describe, expect, it } from 'vitest';
import { globToRegExp } from './glob-to-regexp.js';

describe('globToRegExp', () => {
  it.each([
    ['*.env', '.env', true],
    ['*.env', 'a/.env', false],
    ['**/*.env', 'a/b/c.env', true],
    ['**/*.env', 'c.env', true],
    ['a/**/b', 'a/b', true],
    ['a/**/b', 'a/x/y/b', true],
    ['a/**', 'a/x/y', true],
    ['a/**', 'a', false],
    ['file?.txt', 'file1.txt', true],
    ['file?.txt', 'file10.txt', false],
    ['[abc].js', 'b.js', true],
    ['[!abc].js', 'b.js', false],
    ['[!abc].js', 'd.js', true],
    ['a.b', 'axb', false],
    ['\\*literal', '*literal', true],
    ['[unclosed', '[unclosed', true],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(globToRegExp(pattern).test(path)).toBe(expected);
  });
});
