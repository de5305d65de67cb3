import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { buildZshFork } from './build-zsh-fork.js';
import { ZshForkBuildError } from './zsh-fork-build-error.js';

/** The error a failing build throws (each case fails before configure, in milliseconds). */
async function buildError(source: string, outDir: string): Promise<ZshForkBuildError> {
  const error = await buildZshFork({ source, outDir }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!ZshForkBuildError.isInstance(error))
    throw new Error(`expected a ZshForkBuildError, got ${String(error)}`);
  return error;
}

describe('buildZshFork refuses a bad source before building anything', () => {
  it('names a missing source and says what to pass', async () => {
    const dir = tempDir();
    const error = await buildError(join(dir, 'nowhere.tar.xz'), join(dir, 'out'));
    expect(error.reason).toBe('source_not_found');
    expect(error.message).toContain(`the zsh source ${join(dir, 'nowhere.tar.xz')} does not exist`);
    expect(error.message).toContain('ux zsh-fork build --source /path/to/zsh-5.9.tar.xz');
    expect(error.message).toContain('https://www.zsh.org/pub/zsh-5.9.tar.xz');
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('rejects a file that is neither a tarball nor a .dsc', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'zsh.zip'), 'PK');
    const error = await buildError(join(dir, 'zsh.zip'), join(dir, 'out'));
    expect(error.reason).toBe('source_unsupported');
    expect(error.message).toContain('is not a zsh 5.9 source directory, a release tarball');
  });

  it('rejects a directory that is not zsh source, and a tarball that does not unpack', async () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'empty'));
    const notZsh = await buildError(join(dir, 'empty'), join(dir, 'out'));
    expect(notZsh.reason).toBe('source_unsupported');
    expect(notZsh.message).toContain("does not hold zsh's source (no Src/exec.c)");
    writeFileSync(join(dir, 'broken.tar.xz'), 'not xz at all');
    const broken = await buildError(join(dir, 'broken.tar.xz'), join(dir, 'out'));
    expect(broken.reason).toBe('source_unsupported');
    expect(broken.message).toContain(`could not unpack ${join(dir, 'broken.tar.xz')}`);
    expect(broken.logTail).toBeTruthy();
  });

  it('says the patch does not apply to another exec.c, without touching the source', async () => {
    const dir = tempDir();
    const tree = join(dir, 'zsh-4.0');
    mkdirSync(join(tree, 'Src'), { recursive: true });
    writeFileSync(join(tree, 'Src', 'exec.c'), '/* not zsh 5.9 */\nint main(void) { return 0; }\n');
    const error = await buildError(tree, join(dir, 'out'));
    expect(error.reason).toBe('patch_failed');
    expect(error.message).toContain(`the exec-wrapper patch does not apply to ${tree}`);
    expect(error.path).toMatch(/patches\/zsh-exec-wrapper\.patch$/);
    expect(error.logTail).toContain('Src/exec.c');
  });
});
