import { SandboxUnavailableError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { loadKoffiJobObjects } from './koffi-job-objects.js';

describe('loadKoffiJobObjects', () => {
  it('refuses to bind Win32 off Windows, saying so', async () => {
    const error = await loadKoffiJobObjects('linux').catch((e: unknown) => e);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as SandboxUnavailableError).reason).toContain('not on this platform');
  });
});
