import { chmodSync, copyFileSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import type { EscalationScope } from './escalation-scope.js';
import { programFile, programTrust, sameFile, startingPathProgram } from './program-trust.js';

const GIT = '/usr/bin/git';

function scope(overrides: Partial<EscalationScope> = {}): EscalationScope {
  return {
    writableRoots: [],
    layoutRoots: [],
    tmpRoots: [],
    privateTmp: false,
    // After every file the test made, unless a test says otherwise.
    sessionStartMs: Date.now() + 60_000,
    env: {},
    homeDir: undefined,
    ...overrides,
  };
}

/**
 * Resolves once the host clock has passed `ms` by more than a kernel clock tick (file times come from a
 * coarse clock that trails it by up to one), so a change made next is stamped "during the session".
 */
async function pastTick(ms: number): Promise<void> {
  const past = ms + 20;
  while (Date.now() <= past)
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, past - Date.now() + 1)));
}

describe('programTrust: escalation is decided on the program file', () => {
  it('trusts a system program that predates the session, by identity', () => {
    const trust = programTrust(GIT, scope());
    const stat = statSync(GIT, { bigint: true });
    expect(trust).toEqual({ trusted: true, real: GIT, dev: stat.dev, ino: stat.ino });
  });

  it('refuses a program inside a writable root, naming the root', () => {
    const ws = tempDir('ux-trust-ws-');
    mkdirSync(join(ws, 'bin'));
    copyFileSync(GIT, join(ws, 'bin', 'git'));
    expect(programTrust(join(ws, 'bin', 'git'), scope({ writableRoots: [ws] }))).toEqual({
      trusted: false,
      why: `${join(ws, 'bin', 'git')} lies in ${ws}, which the sandbox can write`,
    });
  });

  it('refuses a path that goes through a link the sandbox could swap, even to a system program', () => {
    const ws = tempDir('ux-trust-ws-');
    symlinkSync('/usr/bin', join(ws, 'sys'));
    const trust = programTrust(join(ws, 'sys', 'git'), scope({ writableRoots: [ws] }));
    expect(trust).toEqual({
      trusted: false,
      why: `${join(ws, 'sys', 'git')} lies in ${ws}, which the sandbox can write`,
    });
  });

  it('refuses a link outside every writable root that leads into one (real path checked)', () => {
    const outside = tempDir('ux-trust-out-');
    const ws = tempDir('ux-trust-ws-');
    copyFileSync(GIT, join(ws, 'git'));
    symlinkSync(join(ws, 'git'), join(outside, 'git'));
    const trust = programTrust(join(outside, 'git'), scope({ writableRoots: [ws] }));
    expect(trust).toEqual({
      trusted: false,
      why: `${join(outside, 'git')} leads to ${join(ws, 'git')} in ${ws}, which the sandbox can write`,
    });
  });

  it('refuses anything under /tmp or $TMPDIR, saying when that is the private /tmp', () => {
    const dir = tempDir('ux-trust-tmp-');
    copyFileSync(GIT, join(dir, 'git'));
    expect(programTrust(join(dir, 'git'), scope({ tmpRoots: [dir], privateTmp: true }))).toEqual({
      trusted: false,
      why: `${join(dir, 'git')} lies in ${dir}, the sandbox's private temporary directory (the host's file of that name is another one)`,
    });
    // Without a private /tmp: still a directory the sandbox writes.
    expect(programTrust(join(dir, 'git'), scope({ tmpRoots: [dir] }))).toMatchObject({ trusted: false });
  });

  it('refuses /proc and /dev paths (the sandbox mounts its own)', () => {
    expect(programTrust('/proc/self/exe', scope())).toEqual({
      trusted: false,
      why: '/proc/self/exe lies in /proc, which the sandbox mounts for itself',
    });
  });

  it('refuses a program created during the session, wherever it lies', async () => {
    const outside = tempDir('ux-trust-out-');
    const start = Date.now();
    await pastTick(start);
    copyFileSync(GIT, join(outside, 'git'));
    expect(programTrust(join(outside, 'git'), scope({ sessionStartMs: start }))).toEqual({
      trusted: false,
      why: `${join(outside, 'git')} was created or changed during this session`,
    });
  });

  it('refuses an old program changed during the session (ctime moves; mtime could be set back)', async () => {
    const outside = tempDir('ux-trust-out-');
    copyFileSync(GIT, join(outside, 'git'));
    const start = Date.now() + 60;
    expect(programTrust(join(outside, 'git'), scope({ sessionStartMs: start }))).toMatchObject({
      trusted: true,
    });
    await pastTick(start);
    chmodSync(join(outside, 'git'), 0o755);
    expect(programTrust(join(outside, 'git'), scope({ sessionStartMs: start }))).toMatchObject({
      trusted: false,
      why: expect.stringContaining('was created or changed during this session'),
    });
  });

  it('refuses an old program reached through a link made during the session', async () => {
    const outside = tempDir('ux-trust-out-');
    const start = Date.now();
    await pastTick(start);
    symlinkSync(GIT, join(outside, 'git'));
    expect(programTrust(join(outside, 'git'), scope({ sessionStartMs: start }))).toEqual({
      trusted: false,
      why: `${join(outside, 'git')} goes through the link ${join(outside, 'git')}, made or changed during this session`,
    });
  });
});

describe('startingPathProgram: which file a bare rule name stands for', () => {
  it('is the first executable of that name on the session PATH, by identity through links', () => {
    const dir = tempDir('ux-trust-path-');
    writeFileSync(join(dir, 'git'), 'not executable');
    const found = startingPathProgram('git', `relative:${dir}:/usr/bin`);
    expect(found?.real).toBe(GIT);
    const link = join(tempDir('ux-trust-link-'), 'git');
    symlinkSync(GIT, link);
    expect(sameFile(programFile(link), found)).toBe(true);
    const copy = join(tempDir('ux-trust-copy-'), 'git');
    copyFileSync(GIT, copy);
    expect(sameFile(programFile(copy), found)).toBe(false);
  });

  it('finds nothing for a name the PATH lacks, a relative PATH entry, or a name with a slash', () => {
    const cwdLike = tempDir('ux-trust-rel-');
    copyFileSync(GIT, join(cwdLike, 'git'));
    chmodSync(join(cwdLike, 'git'), 0o755);
    expect(startingPathProgram('git', '.:')).toBeUndefined();
    expect(startingPathProgram('no-such-program-ux', '/usr/bin')).toBeUndefined();
    expect(startingPathProgram('bin/git', '/usr')).toBeUndefined();
    expect(startingPathProgram('git', undefined)).toBeUndefined();
  });
});
