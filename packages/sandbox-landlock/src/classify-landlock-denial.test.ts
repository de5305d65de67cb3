import { describe, expect, it } from 'vitest';
import { classifyLandlockDenial } from './classify-landlock-denial.js';

describe('classifyLandlockDenial', () => {
  it('calls refusals denials, never a clean exit or a failed set-up', () => {
    expect(classifyLandlockDenial({ exitCode: 0, output: 'Permission denied' })).toBe('not_denied');
    expect(
      classifyLandlockDenial({
        exitCode: 125,
        output: 'ux: sandbox setup failed: cannot enforce the Landlock ruleset',
      }),
    ).toBe('not_denied');
    expect(
      classifyLandlockDenial({ exitCode: 1, output: 'sh: 1: cannot create /etc/x: Permission denied' }),
    ).toBe('denied');
    expect(
      classifyLandlockDenial({
        exitCode: 1,
        output: "mv: cannot move 'a' to '/w/b': Invalid cross-device link",
      }),
    ).toBe('denied');
    expect(classifyLandlockDenial({ exitCode: 159, output: '' })).toBe('denied');
    expect(classifyLandlockDenial({ exitCode: 1, output: 'make: *** [all] Error 1' })).toBe('unknown');
  });
});
