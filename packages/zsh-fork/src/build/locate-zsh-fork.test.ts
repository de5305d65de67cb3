import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { locateZshFork } from './locate-zsh-fork.js';

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
