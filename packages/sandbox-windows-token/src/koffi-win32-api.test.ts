import { SandboxUnavailableError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { environmentBlock, loadKoffiWin32Api } from './koffi-win32-api.js';

describe('loadKoffiWin32Api', () => {
  it('refuses to bind Win32 off Windows, saying so', async () => {
    const error = await loadKoffiWin32Api('linux').catch((e: unknown) => e);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as SandboxUnavailableError).reason).toContain('not on this platform');
  });
});

describe('environmentBlock', () => {
  it('is NAME=value pairs sorted case-insensitively, NUL-separated, double-NUL-terminated, UTF-16LE', () => {
    const block = environmentBlock({ b: '2', Path: 'C:\\x', A: 'ü' });
    expect(block.toString('utf16le')).toBe('A=ü\0b=2\0Path=C:\\x\0\0');
  });

  it('is two NULs when empty, and drops names Windows cannot hold', () => {
    expect(environmentBlock({}).toString('utf16le')).toBe('\0\0');
    expect(environmentBlock({ '': 'x', 'A=B': 'y', C: '' }).toString('utf16le')).toBe('C=\0\0');
  });
});
