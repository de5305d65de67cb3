import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir, useLeakCheck, zshForkPath } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { readBuildInfo } from './build-info.js';
import { verifyZshFork } from './verify-zsh-fork.js';
import { zshForkPatch } from './zsh-fork-patch.js';

// The real patched zsh, built by scripts/ensure-zsh-fork.mjs (configure + make of Debian's zsh 5.9
// source with our patch). zshForkPath() throws with the command to build it: never skipped.
useLeakCheck();

/** Runs `script` in the patched zsh with a logging wrapper; returns what ran and what the wrapper saw. */
function underWrapper(script: string, extraEnv: Record<string, string> = {}) {
  const dir = tempDir('ux-zsh-fork-it-');
  const log = join(dir, 'wrapper.log');
  const wrapper = join(dir, 'wrapper.sh');
  // One record per intercepted exec: its arguments joined by '|'.
  writeFileSync(
    wrapper,
    `#!/bin/sh\n(IFS='|'; printf '%s\\n' "$*") >> '${log}'\nfile=$1\nshift 2\nexec "$file" "$@"\n`,
    {
      mode: 0o755,
    },
  );
  const result = spawnSync(zshForkPath(), ['-fc', script], {
    cwd: dir,
    env: { PATH: '/usr/bin:/bin', HOME: dir, EXEC_WRAPPER: wrapper, UX_TEST_WRAPPER: wrapper, ...extraEnv },
    encoding: 'utf8',
    timeout: 10_000,
  });
  let seen: string[] = [];
  try {
    seen = readFileSync(log, 'utf8').split('\n').slice(0, -1);
  } catch {
    // The wrapper never ran.
  }
  return { status: result.status, stdout: result.stdout, stderr: result.stderr, seen, wrapper, dir };
}

describe('the patched zsh (built from Debian’s zsh 5.9 source)', () => {
  it('passes the smoke test and was built from the current patch', async () => {
    const zsh = zshForkPath();
    expect(await verifyZshFork(zsh)).toEqual({ ok: true, version: '5.9' });
    const info = readBuildInfo(join(zsh, '..', '..'))!;
    expect(info.patchSha256).toBe(zshForkPatch().sha256);
    expect(info.zshVersion).toBe('5.9');
  });

  it('reports verifyZshFork failures on an unpatched or missing zsh, with the fix', async () => {
    // /bin/sh is no zsh; a nonexistent path is no zsh either.
    const notZsh = await verifyZshFork('/bin/sh');
    expect(notZsh.ok).toBe(false);
    const missing = await verifyZshFork('/nonexistent/bin/zsh');
    expect(missing).toEqual({
      ok: false,
      reason: 'no patched zsh at /nonexistent/bin/zsh',
      fix: 'build it with: ux zsh-fork build',
    });
  });

  it('hands the wrapper the program found on PATH, for every stage, substitution and variable command', () => {
    const run = underWrapper(
      'R=rm; touch x; $R -f x; echo $(uname) | tr a-z A-Z; ls x 2>/dev/null; echo done',
    );
    expect(run.stdout).toBe('LINUX\ndone\n');
    expect(run.status).toBe(0);
    // Resolved absolute paths, argv[0] as typed. Pipeline stages run concurrently: compare as a set.
    const touch = execFileSync('/bin/sh', ['-c', 'command -v touch'], { env: { PATH: '/usr/bin:/bin' } })
      .toString()
      .trim();
    expect(run.seen[0]).toBe(`${touch}|touch|x`);
    expect(run.seen[1]).toMatch(/^\/(usr\/)?bin\/rm\|rm\|-f\|x$/);
    expect(run.seen.slice(2, 5).sort()).toEqual(
      ['/usr/bin/tr|tr|a-z|A-Z', '/usr/bin/uname|uname', '/usr/bin/ls|ls|x'].sort(),
    );
    expect(run.seen).toHaveLength(5);
  });

  it('does not call the wrapper for a command that is not found (127, zsh’s own message)', () => {
    const run = underWrapper('ux-no-such-command-here; echo status=$?');
    expect(run.stdout).toBe('status=127\n');
    expect(run.stderr).toContain('command not found: ux-no-such-command-here');
    expect(run.seen).toEqual([]);
  });

  it('fails closed when the wrapper cannot be executed: the program is not run, 126', () => {
    const run = underWrapper('/bin/echo fallback; echo status=$?', { EXEC_WRAPPER: '/nonexistent/wrapper' });
    expect(run.stdout).toBe('status=126\n');
    expect(run.stderr).toContain(
      'exec wrapper /nonexistent/wrapper: no such file or directory (/bin/echo was not run)',
    );
  });

  it('reads EXEC_WRAPPER on every exec: unset, blank or emptied in the script, nothing is intercepted', () => {
    const run = underWrapper(
      '/bin/echo one; unset EXEC_WRAPPER; /bin/echo two; EXEC_WRAPPER= /bin/echo three',
    );
    expect(run.stdout).toBe('one\ntwo\nthree\n');
    expect(run.seen).toEqual(['/bin/echo|/bin/echo|one']);
    const blank = underWrapper('/bin/echo blank', { EXEC_WRAPPER: ' /bin/false' });
    expect(blank.stdout).toBe('blank\n');
    // An exported change in the script reaches the next exec.
    const late = underWrapper(
      'unset EXEC_WRAPPER; /bin/echo a; export EXEC_WRAPPER=$UX_TEST_WRAPPER; /bin/echo b',
    );
    expect(late.stdout).toBe('a\nb\n');
    expect(late.seen).toEqual(['/bin/echo|/bin/echo|b']);
  });

  it('is self-contained: modules load without a module path, zsh/files stays out, functions autoload', () => {
    const zsh = zshForkPath();
    const run = spawnSync(
      zsh,
      [
        '-fc',
        'zmodload zsh/datetime zsh/stat zsh/mathfunc zsh/system zsh/regex && echo modules; zmodload zsh/files 2>/dev/null || echo no-files; autoload -Uz is-at-least && is-at-least 5.9 && echo autoload',
      ],
      { env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent' }, encoding: 'utf8', timeout: 10_000 },
    );
    expect(run.stdout).toBe('modules\nno-files\nautoload\n');
  });
});
