import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { EffectivePolicy } from '@ux/protocol';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createWindowsTokenSandbox } from './windows-token-sandbox.js';

// These start real restricted-token processes, so they need Windows; elsewhere they are reported as
// skipped. They use the built launcher: run `pnpm --filter @ux/sandbox-windows-token build` first.
const onWindows = process.platform === 'win32';
const LAUNCHER = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'windows-token-launcher.js');

const WORKSPACE_WRITE: EffectivePolicy = {
  fileSystem: {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
    ],
  },
  network: 'restricted',
};

function workspace(): { dir: string; outside: string } {
  const base = realpathSync(mkdtempSync(join(tmpdir(), 'ux-windows-token-')));
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  const dir = join(base, 'workspace');
  mkdirSync(join(dir, '.git', 'hooks'), { recursive: true });
  writeFileSync(join(dir, '.git', 'config'), '[core]\n');
  const outside = join(base, 'outside');
  mkdirSync(outside);
  return { dir, outside };
}

async function run(cwd: string, command: string) {
  expect(existsSync(LAUNCHER), `build the package first: ${LAUNCHER} is missing`).toBe(true);
  const backend = createWindowsTokenSandbox({ launcherPath: LAUNCHER, persistGrants: false });
  const plan = await backend.plan({
    argv: ['C:\\Windows\\System32\\cmd.exe', '/d', '/s', '/c', command],
    cwd,
    env: { SystemRoot: process.env.SystemRoot ?? 'C:\\Windows', Path: process.env.Path ?? '' },
    policy: WORKSPACE_WRITE,
    tty: false,
  });
  const result = spawnSync(plan.argv[0]!, plan.argv.slice(1), {
    cwd: plan.cwd,
    env: plan.env,
    encoding: 'utf8',
  });
  const output = `${result.stdout}${result.stderr}`;
  return {
    exitCode: result.status ?? 1,
    output,
    verdict: backend.classifyDenial?.({ exitCode: result.status ?? 1, output }),
  };
}

describe.skipIf(!onWindows)('the restricted token on a real Windows machine (Windows only)', () => {
  it('writes inside the workspace and is denied outside it (Windows only)', async () => {
    const { dir, outside } = workspace();
    expect((await run(dir, 'echo inside> inside.txt')).exitCode).toBe(0);
    expect(readFileSync(join(dir, 'inside.txt'), 'utf8')).toContain('inside');
    const escaped = await run(dir, `echo escaped> "${join(outside, 'escaped.txt')}"`);
    expect(escaped.exitCode).not.toBe(0);
    expect(escaped.verdict).toBe('denied');
    expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
  });

  it('keeps .git\\config and .git\\hooks read-only, and removes its deny entries afterwards (Windows only)', async () => {
    const { dir } = workspace();
    expect((await run(dir, 'echo evil> .git\\hooks\\pre-commit')).exitCode).not.toBe(0);
    expect((await run(dir, 'echo x>> .git\\config')).exitCode).not.toBe(0);
    expect(readFileSync(join(dir, '.git', 'config'), 'utf8')).toBe('[core]\n');
    expect((await run(dir, 'move .git moved')).exitCode).not.toBe(0);
    // After the run the user's own processes are unaffected (the entries named a run SID and were removed).
    writeFileSync(join(dir, '.git', 'hooks', 'pre-commit'), 'ok');
  });

  it('gives commands a private TEMP in place of %TEMP%, removed at close (Windows only)', async () => {
    const { dir, outside } = workspace();
    const privateTmp = join(outside, 'private-tmp');
    const backend = createWindowsTokenSandbox({ launcherPath: LAUNCHER, privateTmpDir: privateTmp });
    const cmd = async (command: string) => {
      const plan = await backend.plan({
        argv: ['C:\\Windows\\System32\\cmd.exe', '/d', '/s', '/c', command],
        cwd: dir,
        env: {
          SystemRoot: process.env.SystemRoot ?? 'C:\\Windows',
          Path: process.env.Path ?? '',
          TEMP: outside,
          TMP: outside,
        },
        policy: {
          ...WORKSPACE_WRITE,
          fileSystem: {
            kind: 'restricted',
            entries: [
              ...(WORKSPACE_WRITE.fileSystem.kind === 'restricted' ? WORKSPACE_WRITE.fileSystem.entries : []),
              { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
            ],
          },
          privateTmp: true,
        },
        tty: false,
      });
      return spawnSync(plan.argv[0]!, plan.argv.slice(1), { cwd: plan.cwd, env: plan.env, encoding: 'utf8' });
    };
    expect((await cmd('echo private> "%TEMP%\\x.txt"')).status).toBe(0);
    expect(readFileSync(join(privateTmp, 'x.txt'), 'utf8')).toContain('private');
    expect((await cmd(`echo escaped> "${join(outside, 'escaped.txt')}"`)).status).not.toBe(0);
    expect(existsSync(join(outside, 'escaped.txt'))).toBe(false);
    await backend.close?.();
    expect(existsSync(privateTmp)).toBe(false);
  });

  it("keeps ux's hidden directories inside a writable root unwritable (Windows only)", async () => {
    const { dir } = workspace();
    mkdirSync(join(dir, 'ux-runtime'));
    const backend = createWindowsTokenSandbox({ launcherPath: LAUNCHER, persistGrants: false });
    const plan = await backend.plan({
      argv: ['C:\\Windows\\System32\\cmd.exe', '/d', '/s', '/c', 'echo x> ux-runtime\\planted.txt'],
      cwd: dir,
      env: { SystemRoot: process.env.SystemRoot ?? 'C:\\Windows', Path: process.env.Path ?? '' },
      policy: { ...WORKSPACE_WRITE, hostState: { hidden: [join(dir, 'ux-runtime')] } },
      tty: false,
    });
    const result = spawnSync(plan.argv[0]!, plan.argv.slice(1), { cwd: plan.cwd, env: plan.env });
    expect(result.status).not.toBe(0);
    expect(existsSync(join(dir, 'ux-runtime', 'planted.txt'))).toBe(false);
  });

  it('kills the whole process tree when the launcher is killed (Windows only)', async () => {
    const { dir } = workspace();
    const backend = createWindowsTokenSandbox({ launcherPath: LAUNCHER, persistGrants: false });
    const plan = await backend.plan({
      argv: [
        'C:\\Windows\\System32\\cmd.exe',
        '/d',
        '/c',
        'ping -n 30 127.0.0.1 > nul & echo survived> survived.txt',
      ],
      cwd: dir,
      env: { SystemRoot: process.env.SystemRoot ?? 'C:\\Windows', Path: process.env.Path ?? '' },
      policy: WORKSPACE_WRITE,
      tty: false,
    });
    const { spawn } = await import('node:child_process');
    const child = spawn(plan.argv[0]!, plan.argv.slice(1), { cwd: plan.cwd, env: plan.env, stdio: 'ignore' });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    child.kill();
    await new Promise((resolve) => setTimeout(resolve, 31_000));
    expect(existsSync(join(dir, 'survived.txt'))).toBe(false);
  }, 60_000);
});
