import { UxError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { parseSbpl, SbplSyntaxError } from './parse-sbpl.js';

describe('parseSbpl', () => {
  it('throws a SbplSyntaxError (a UxError) that says the line of an unclosed list', () => {
    const error = (() => {
      try {
        parseSbpl('(version 1)\n(allow file-read*');
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(SbplSyntaxError.isInstance(error)).toBe(true);
    expect(UxError.isInstance(error)).toBe(true);
    const syntax = error as SbplSyntaxError;
    expect(syntax.code).toBe('sbpl_syntax_error');
    expect(syntax.line).toBe(2);
    expect(syntax.message).toMatch(/^line 2: /);
  });
});
