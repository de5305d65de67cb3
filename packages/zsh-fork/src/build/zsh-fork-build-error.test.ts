import { UxError } from '@ux/protocol/errors';
import { describe, expect, it } from 'vitest';
import { passSourceFix, zshForkBuildHint } from './zsh-download-hint.js';
import { ZshForkBuildError } from './zsh-fork-build-error.js';

describe('ZshForkBuildError', () => {
  it('says the problem, the fix, then the failing step’s last lines', () => {
    const error = new ZshForkBuildError({
      reason: 'configure_failed',
      problem: "zsh's ./configure failed",
      fix: 'apt-get install build-essential libncurses-dev',
      logTail: 'checking for tgetent... no\nconfigure: error: no terminal library',
    });
    expect(error.message).toBe(
      "zsh's ./configure failed\napt-get install build-essential libncurses-dev\nlast lines of output:\n  checking for tgetent... no\n  configure: error: no terminal library",
    );
    expect(ZshForkBuildError.isInstance(error)).toBe(true);
    expect(UxError.isInstance(error)).toBe(true);
    // What happened, not what it leads to: a failed build is not an unavailable sandbox.
    expect(error.code).toBe('zsh_fork_build_failed');
    expect(ZshForkBuildError.isInstance(new UxError('spawn_failed', 'x'))).toBe(false);
    expect(error.toJSON()).toMatchObject({
      reason: 'configure_failed',
      fix: expect.stringContaining('libncurses-dev'),
    });
  });
});

describe('how to build it', () => {
  it('is plain `ux zsh-fork build` where ux can fetch the source from the mirror (Debian, any user)', () => {
    expect(zshForkBuildHint({ platform: 'linux', debian: true, root: true })).toBe('ux zsh-fork build');
    expect(zshForkBuildHint({ platform: 'linux', debian: true, root: false })).toBe('ux zsh-fork build');
    for (const context of [
      { platform: 'linux', debian: false, root: true },
      { platform: 'darwin', debian: false, root: false },
    ] as const)
      expect(zshForkBuildHint(context)).toBe(
        'ux zsh-fork build --source /path/to/zsh-5.9.tar.xz (download it from https://www.zsh.org/pub/zsh-5.9.tar.xz)',
      );
    expect(passSourceFix()).toContain('ux zsh-fork build --source /path/to/zsh-5.9.tar.xz');
  });
});
