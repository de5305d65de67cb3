import { existsSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { execServerRuntimeDir, sweepOrphanRuntimeDirs } from './exec-server-runtime-dir.js';

describe('execServerRuntimeDir', () => {
  it('makes a private directory named after this server in the runtime root', () => {
    const root = tempDir('ux-runtime-root-');
    const made = execServerRuntimeDir({ root });
    expect(made).toMatch(new RegExp(`^${root}/exec-server-${process.pid}-[0-9a-f]{8}$`));
    expect(statSync(made).mode & 0o777).toBe(0o700);
  });

  it('refuses a runtime root that is a link', () => {
    const target = tempDir('ux-runtime-target-');
    const link = join(tempDir('ux-runtime-parent-'), 'ux');
    symlinkSync(target, link);
    expect(() => execServerRuntimeDir({ root: link })).toThrow('is a symbolic link');
    expect(readdirSync(target)).toEqual([]);
  });
});

describe('sweepOrphanRuntimeDirs', () => {
  it('removes the directories of servers that are gone, without following links, and nothing else', async () => {
    const root = tempDir('ux-runtime-root-');
    const canary = tempDir('ux-runtime-canary-');
    writeFileSync(join(canary, 'keep'), 'keep');
    // A pid far above any pid_max in use: no process has it. pid 1 is always alive.
    const orphan = join(root, 'exec-server-4194303-0a1b2c3d');
    const living = join(root, 'exec-server-1-0a1b2c3d');
    const otherKind = join(root, 'bwrap-4194303-0a1b2c3d');
    const malformed = join(root, 'exec-server-4194303-XYZ');
    for (const dir of [orphan, living, otherKind, malformed])
      mkdirSync(join(dir, 'shell-snapshots'), { recursive: true });
    writeFileSync(join(orphan, 'shell-snapshots/s.bash.sh'), 'export A=1\n');
    symlinkSync(canary, join(orphan, 'shell-snapshots/link'));
    // A link named like an orphan: neither followed nor removed.
    symlinkSync(canary, join(root, 'exec-server-4194302-0a1b2c3d'));

    expect(await sweepOrphanRuntimeDirs(root)).toEqual([orphan]);
    expect(existsSync(orphan)).toBe(false);
    for (const dir of [living, otherKind, malformed]) expect(existsSync(dir)).toBe(true);
    expect(existsSync(join(root, 'exec-server-4194302-0a1b2c3d'))).toBe(true);
    expect(readdirSync(canary)).toEqual(['keep']);
  });
});
