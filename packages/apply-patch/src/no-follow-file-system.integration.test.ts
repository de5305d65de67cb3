import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { applyPlan } from './apply-patch.js';
import { noFollowFileSystem } from './no-follow-file-system.js';
import { planPatch } from './plan-patch.js';
import { readTextFile } from './read-text-file.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function scratch(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ux-nofollow-')));
  made.push(dir);
  return dir;
}

describe.runIf(process.platform === 'linux')('noFollowFileSystem (Linux)', () => {
  it('applies an ordinary patch: add, update with a kept mode, move, delete, new directories', async () => {
    const dir = scratch();
    writeFileSync(join(dir, 'a.txt'), 'one\ntwo\n', { mode: 0o755 });
    writeFileSync(join(dir, 'gone.txt'), 'x\n');
    const plan = await planPatch(
      [
        '*** Begin Patch',
        '*** Add File: deep/new/b.txt',
        '+hello',
        '*** Update File: a.txt',
        '*** Move to: moved/a.txt',
        '@@',
        ' one',
        '-two',
        '+three',
        '*** Delete File: gone.txt',
        '*** End Patch',
      ].join('\n'),
      { cwd: dir },
    );
    await applyPlan(plan, { fs: noFollowFileSystem()! });
    expect(readFileSync(join(dir, 'deep/new/b.txt'), 'utf8')).toBe('hello\n');
    expect(readFileSync(join(dir, 'moved/a.txt'), 'utf8')).toBe('one\nthree\n');
    expect(statSync(join(dir, 'moved/a.txt')).mode & 0o777).toBe(0o755);
    expect(existsSync(join(dir, 'a.txt'))).toBe(false);
    expect(existsSync(join(dir, 'gone.txt'))).toBe(false);
  });

  it('refuses to write through a directory that became a link after the check, and changes nothing', async () => {
    const dir = scratch();
    const protectedDir = join(dir, 'protected');
    mkdirSync(protectedDir);
    mkdirSync(join(dir, 'src'));
    const plan = await planPatch('*** Begin Patch\n*** Add File: src/hook\n+#!/bin/sh\n*** End Patch', {
      cwd: dir,
    });
    // Checked: src/hook. Then the sandboxed side swaps src for a link to the protected directory.
    rmSync(join(dir, 'src'), { recursive: true });
    symlinkSync(protectedDir, join(dir, 'src'));
    await expect(applyPlan(plan, { fs: noFollowFileSystem()! })).rejects.toThrow(/no file was changed/);
    expect(existsSync(join(protectedDir, 'hook'))).toBe(false);
    // Control: the plain file system follows the link and writes into the protected directory.
    await applyPlan(plan);
    expect(existsSync(join(protectedDir, 'hook'))).toBe(true);
  });

  it('replaces a link that appeared at the file name instead of writing where it points', async () => {
    const dir = scratch();
    const outside = join(dir, 'outside.txt');
    writeFileSync(outside, 'keep\n');
    writeFileSync(join(dir, 'a.txt'), 'one\n');
    const plan = await planPatch('*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+two\n*** End Patch', {
      cwd: dir,
    });
    rmSync(join(dir, 'a.txt'));
    symlinkSync(outside, join(dir, 'a.txt'));
    await applyPlan(plan, { fs: noFollowFileSystem()! });
    expect(readFileSync(outside, 'utf8')).toBe('keep\n');
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('two\n');
  });
});

describe('readTextFile', () => {
  it('refuses a FIFO at once instead of blocking', async () => {
    const dir = scratch();
    const fifo = join(dir, 'AGENTS.md');
    execFileSync('mkfifo', [fifo]);
    await expect(readTextFile(fifo)).rejects.toMatchObject({ code: 'ENOTREG' });
    await expect(readTextFile(fifo)).rejects.toThrow(/is a FIFO, not a regular file/);
  });

  it('refuses a link to a device instead of reading without end', async () => {
    const dir = scratch();
    symlinkSync('/dev/zero', join(dir, 'zero.txt'));
    await expect(readTextFile(join(dir, 'zero.txt'))).rejects.toThrow(/character device/);
  });

  it('refuses a file over its limit, read from the descriptor', async () => {
    const { readRegularFile } = await import('./read-text-file.js');
    const dir = scratch();
    writeFileSync(join(dir, 'big.txt'), 'x'.repeat(100));
    await expect(readRegularFile(join(dir, 'big.txt'), { limit: 99 })).rejects.toMatchObject({
      code: 'EFBIG',
    });
    expect((await readRegularFile(join(dir, 'big.txt'), { limit: 100 })).length).toBe(100);
  });
});
