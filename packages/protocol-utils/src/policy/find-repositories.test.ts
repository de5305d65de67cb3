import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { findRepositories } from './find-repositories.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tree(paths: string[]): string {
  const root = mkdtempSync(join(tmpdir(), 'ux-find-repos-'));
  made.push(root);
  for (const path of paths) {
    if (path.endsWith('/')) mkdirSync(join(root, path), { recursive: true });
    else {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), 'gitdir: ../.git/modules/x\n');
    }
  }
  return root;
}

describe('findRepositories', () => {
  it('finds the root, nested repositories, submodule checkouts and worktrees, not what is inside .git', () => {
    const root = tree([
      '.git/modules/x/',
      'vendor/lib/.git/hooks/',
      'sub/.git',
      'a/b/c/d/.git/',
      'node_modules/pkg/.git/',
    ]);
    const found = findRepositories([root]);
    expect(found.repositories).toEqual(
      [root, join(root, 'a/b/c/d'), join(root, 'sub'), join(root, 'vendor/lib')].sort(),
    );
    expect(found.truncated).toBe(false);
  });

  it('never follows a symbolic link', () => {
    const root = tree(['inside/']);
    const outside = tree(['repo/.git/']);
    symlinkSync(outside, join(root, 'inside', 'link'));
    expect(findRepositories([root]).repositories).toEqual([]);
  });

  it('stops at its budget and says so', () => {
    const root = tree(['a/', 'b/', 'c/', 'd/', 'e/x/.git/']);
    const found = findRepositories([root], { maxDirectories: 3 });
    expect(found.directories).toBe(3);
    expect(found.truncated).toBe(true);
    expect(found.repositories).toEqual([]);
  });
});

describe('findRepositories with a cache', () => {
  it('reads a directory again only when its change time moved, and finds what was added there', async () => {
    const { utimesSync, statSync } = await import('node:fs');
    const { createRepositoryScanCache } = await import('./find-repositories.js');
    const root = tree(['a/b/', 'c/']);
    // Settled: the cache only trusts directories changed more than a second ago.
    const old = new Date(Date.now() - 60_000);
    const cache = createRepositoryScanCache();
    for (const dir of ['a/b', 'a', 'c', '.']) utimesSync(join(root, dir), old, old);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(findRepositories([root], {}, cache).repositories).toEqual([]);
    const cachedCtime = cache.entries.get(join(root, 'a/b'))!.ctimeMs;
    expect(findRepositories([root], {}, cache).repositories).toEqual([]);
    expect(cache.entries.get(join(root, 'a/b'))!.ctimeMs).toBe(cachedCtime);
    // A new .git deep down, its directory's modification time set back as a command could: the change
    // time moved all the same, so the scan reads it again and finds it.
    const cachedMtime = statSync(join(root, 'a/b')).mtimeMs;
    mkdirSync(join(root, 'a/b/.git'));
    utimesSync(join(root, 'a/b'), old, old);
    expect(statSync(join(root, 'a/b')).mtimeMs).toBe(cachedMtime);
    // Settled again, so only the change time can tell.
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(findRepositories([root], {}, cache).repositories).toEqual([join(root, 'a/b')]);
  });
});
