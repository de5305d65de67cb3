import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { snapshotTempDir } from './snapshot-temp-dir.js';

describe('snapshotTempDir', () => {
  it('makes a private directory named after the server, and removes those of servers that are gone', () => {
    const parent = tempDir('ux-snapshot-parent-');
    // A pid far above any pid_max in use: no process has it.
    const orphan = join(parent, 'ux-exec-server-4194303-AbC123');
    const living = join(parent, `ux-exec-server-1-XyZ789`); // pid 1 is always alive
    const unrelated = join(parent, 'ux-exec-server-notapid');
    for (const dir of [orphan, living, unrelated])
      mkdirSync(join(dir, 'shell-snapshots'), { recursive: true });

    const made = snapshotTempDir(parent, 4242);
    expect(made).toMatch(/\/ux-exec-server-4242-[A-Za-z0-9]{6}$/);
    expect(statSync(made).mode & 0o777).toBe(0o700);
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(living)).toBe(true);
    expect(existsSync(unrelated)).toBe(true);
  });
});
