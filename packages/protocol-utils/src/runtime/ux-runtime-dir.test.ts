import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { SandboxUnavailableError } from '@ux/protocol/core';
import { afterEach, describe, expect, it } from 'vitest';
import {
  createProcessRuntimeDir,
  ensureUxRuntimeRoot,
  runtimeDirPid,
  uxRuntimeRoot,
  uxRuntimeRoots,
} from './ux-runtime-dir.js';

const made: string[] = [];
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ux-runtime-test-'));
  made.push(dir);
  return dir;
}

describe('uxRuntimeRoots', () => {
  it('is the same for every process of a user: the per-user runtime directory, then /tmp/ux-<uid>', () => {
    expect(uxRuntimeRoots(1000)).toEqual(['/run/user/1000/ux', '/tmp/ux-1000']);
    expect(uxRuntimeRoots(1000)).toContain(uxRuntimeRoot(1000));
  });

  it('takes /tmp/ux-<uid> when /run/user/<uid> is not the user’s', () => {
    // No login manager made a directory for this uid.
    expect(uxRuntimeRoot(987_654)).toBe('/tmp/ux-987654');
  });
});

describe('ensureUxRuntimeRoot', () => {
  it('makes the root 0700 and narrows a wider mode of the user’s own directory', () => {
    const root = join(scratch(), 'ux');
    expect(ensureUxRuntimeRoot(root)).toBe(root);
    expect(statSync(root).mode & 0o777).toBe(0o700);
    chmodSync(root, 0o755);
    ensureUxRuntimeRoot(root);
    expect(statSync(root).mode & 0o777).toBe(0o700);
  });

  it('refuses a link or a file in its place, saying how to fix it', () => {
    const base = scratch();
    const target = join(base, 'elsewhere');
    mkdirSync(target);
    symlinkSync(target, join(base, 'link'));
    expect(() => ensureUxRuntimeRoot(join(base, 'link'))).toThrow(SandboxUnavailableError);
    expect(() => ensureUxRuntimeRoot(join(base, 'link'))).toThrow(/is a symbolic link.*remove it/);
    writeFileSync(join(base, 'file'), '');
    expect(() => ensureUxRuntimeRoot(join(base, 'file'))).toThrow(/is not a directory/);
  });
});

describe('createProcessRuntimeDir', () => {
  it('makes a private directory named after the kind and this process', () => {
    const root = ensureUxRuntimeRoot(join(scratch(), 'ux'));
    const dir = createProcessRuntimeDir('bwrap', root);
    expect(dirname(dir)).toBe(root);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(runtimeDirPid(basename(dir))).toBe(process.pid);
    expect(() => createProcessRuntimeDir('../x', root)).toThrow(TypeError);
  });

  it('reads the pid back only from names it makes', () => {
    expect(runtimeDirPid('exec-server-42-0a1b2c3d')).toBe(42);
    expect(runtimeDirPid('notes.txt')).toBeUndefined();
    expect(runtimeDirPid('bwrap-42-xyz')).toBeUndefined();
  });
});
