import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { verifyZshFork } from './verify-zsh-fork.js';

/** A stand-in "zsh": answers --version like zsh 5.9 and runs `-fc SCRIPT` with `body`. */
function fakeZsh(body: string): string {
  const path = join(tempDir('ux-fake-zsh-'), 'zsh');
  writeFileSync(
    path,
    `#!/bin/sh\nif [ "$1" = --version ]; then echo 'zsh 5.9 (x86_64-pc-linux-gnu)'; exit 0; fi\nshift\n${body}\n`,
    { mode: 0o755 },
  );
  return path;
}

describe('verifyZshFork on zshs that break the contract', () => {
  it('says an unpatched zsh is not the patched one', async () => {
    // Runs the script itself (sh has no `disable`: define it away), never calling the wrapper.
    const zsh = fakeZsh(`exec /bin/sh -c "disable() { :; }; $1"`);
    expect(await verifyZshFork(zsh)).toEqual({
      ok: false,
      reason: `${zsh} (zsh 5.9) ran /bin/echo without calling EXEC_WRAPPER: it is not the patched zsh`,
      fix: 'build the patched zsh with: ux zsh-fork build, or point zsh_fork.zsh_path at one',
    });
  });

  it('says what the wrapper got when the calling convention differs (argv without the path)', async () => {
    const zsh = fakeZsh('[ -n "$EXEC_WRAPPER" ] && exec "$EXEC_WRAPPER" echo smoke');
    const result = await verifyZshFork(zsh, { buildCommand: 'make zsh' });
    expect(result).toEqual({
      ok: false,
      reason:
        'EXEC_WRAPPER was called with ["echo","smoke"]; expected ["/bin/echo","/bin/echo","smoke","/bin/echo","echo","smoke"] (for each exec: the program\'s path, then its argv)',
      fix: 'rebuild it with the current patch: make zsh',
    });
  });

  it('says when the wrapper is called although EXEC_WRAPPER is blank', async () => {
    // Right for the smoke run; for every other run it strips the blank and calls the wrapper anyway.
    const zsh = fakeZsh(
      [
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a shell parameter expansion
        'w=${EXEC_WRAPPER# }',
        'case "$1" in',
        '  *disable*) "$w" /bin/echo /bin/echo smoke; exec "$w" /bin/echo echo smoke ;;',
        '  *) if [ -n "$w" ]; then exec "$w" /bin/echo /bin/echo blank; fi; exec /bin/sh -c "$1" ;;',
        'esac',
      ].join('\n'),
    );
    const result = await verifyZshFork(zsh);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.reason).toBe(
      'EXEC_WRAPPER was called when it must not be (unset, blank, or for a command that does not exist): ["/bin/echo","/bin/echo","blank","/bin/echo","/bin/echo","blank"]',
    );
  });
});
