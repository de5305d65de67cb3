import { describe, expect, it } from 'vitest';
import { normalizeWin32Path, win32ApiPath } from './win32-path.js';

describe('Windows path helpers', () => {
  it('normalises separators, the drive letter and trailing separators', () => {
    expect(normalizeWin32Path('c:/Work/App/')).toBe('C:\\Work\\App');
    expect(normalizeWin32Path('C:\\')).toBe('C:\\');
    expect(normalizeWin32Path('\\\\srv\\share\\x\\')).toBe('\\\\srv\\share\\x');
  });

  it('gives long paths the \\\\?\\ form, drive and UNC', () => {
    const long = `C:\\${'a'.repeat(250)}`;
    expect(win32ApiPath('C:\\short')).toBe('C:\\short');
    expect(win32ApiPath(long)).toBe(`\\\\?\\${long}`);
    expect(win32ApiPath(`\\\\srv\\share\\${'b'.repeat(250)}`)).toBe(
      `\\\\?\\UNC\\srv\\share\\${'b'.repeat(250)}`,
    );
    expect(win32ApiPath(`\\\\?\\${long}`)).toBe(`\\\\?\\${long}`);
  });
});
