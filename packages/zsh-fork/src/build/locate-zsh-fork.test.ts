import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { cachedZshForkPath } from './ensure-zsh-fork-cache.js';
import { locateZshFork } from './locate-zsh-fork.js';
import { zshForkPatch } from './zsh-fork-patch.js';

describe('locateZshFork', () => {
  it('uses $UX_HOME/zsh-fork/bin/zsh unless zsh_fork.zsh_path is configured', () => {
    const home = tempDir();
    const missing = locateZshFork({ uxHome: home });
    expect(missing).toEqual({
      path: join(home, 'zsh-fork', 'bin', 'zsh'),
      origin: 'default',
      exists: false,
      defaultOutDir: join(home, 'zsh-fork'),
      buildDir: join(home, 'zsh-fork'),
    });
    mkdirSync(join(home, 'zsh-fork', 'bin'), { recursive: true });
    writeFileSync(join(home, 'zsh-fork', 'bin', 'zsh'), '#!/bin/sh\n');
    expect(locateZshFork({ uxHome: home }).exists).toBe(false);
    chmodSync(join(home, 'zsh-fork', 'bin', 'zsh'), 0o755);
    expect(locateZshFork({ uxHome: home }).exists).toBe(true);

    const configured = locateZshFork({ uxHome: home, configured: '/opt/zsh/bin/zsh' });
    expect(configured).toMatchObject({
      path: '/opt/zsh/bin/zsh',
      origin: 'configured',
      buildDir: '/opt/zsh',
    });
    expect(configured.exists).toBe(false);
  });
});

describe('cachedZshForkPath', () => {
  it("finds the tests' build for the current patch under ~/.cache/ux/zsh-fork, or $UX_ZSH_FORK_CACHE", () => {
    const home = tempDir();
    const env = { HOME: home };
    expect(cachedZshForkPath(env)).toBeUndefined();
    const dir = join(home, '.cache', 'ux', 'zsh-fork', zshForkPatch().sha256.slice(0, 12));
    mkdirSync(join(dir, 'bin'), { recursive: true });
    writeFileSync(join(dir, 'bin', 'zsh'), '#!/bin/sh\n');
    expect(cachedZshForkPath(env)).toBeUndefined();
    chmodSync(join(dir, 'bin', 'zsh'), 0o755);
    expect(cachedZshForkPath(env)).toBe(join(dir, 'bin', 'zsh'));
    // Another patch's build is not the current one's.
    const other = tempDir();
    mkdirSync(join(other, '.cache', 'ux', 'zsh-fork', '000000000000', 'bin'), { recursive: true });
    expect(cachedZshForkPath({ HOME: other })).toBeUndefined();
    expect(cachedZshForkPath({ HOME: other, UX_ZSH_FORK_CACHE: dir })).toBe(join(dir, 'bin', 'zsh'));
  });
});
