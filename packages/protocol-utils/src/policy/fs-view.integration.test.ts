import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { nodeFsView } from './fs-view.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('nodeFsView().readFile', () => {
  it('reads a regular file, and never blocks on a FIFO or reads a device', () => {
    const root = mkdtempSync(join(tmpdir(), 'ux-fs-view-'));
    made.push(root);
    mkdirSync(join(root, 'repo/.git'), { recursive: true });
    writeFileSync(join(root, 'repo/.git/HEAD'), 'ref: refs/heads/main\n');
    execFileSync('mkfifo', [join(root, 'repo/.git/config')]);
    symlinkSync('/dev/zero', join(root, 'repo/.git/commondir'));
    const fs = nodeFsView();
    expect(fs.readFile(join(root, 'repo/.git/HEAD'))).toBe('ref: refs/heads/main\n');
    expect(fs.readFile(join(root, 'repo/.git/config'))).toBeUndefined();
    expect(fs.readFile(join(root, 'repo/.git/commondir'))).toBeUndefined();
  });
});
