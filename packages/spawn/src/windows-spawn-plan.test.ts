import { InvalidArgumentsError, MissingCommandLineError, SpawnFailedError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { WINDOWS_TEST_ENV, WINDOWS_TEST_FS } from '../test/windows-test-fs.js';
import type { LocalSpawnRequest } from './spawn-escalation.js';
import { planWindowsSpawn } from './windows-spawn-plan.js';

const base: LocalSpawnRequest = {
  argv: ['cmd.exe', '/d', '/s', '/c', 'echo "hi there" & exit /b 3'],
  cwd: 'C:\\work',
  env: WINDOWS_TEST_ENV,
  tty: false,
  stdin: 'closed',
};
const plan = (overrides: Partial<LocalSpawnRequest>) =>
  planWindowsSpawn({ ...base, ...overrides }, WINDOWS_TEST_FS);
const issues = (overrides: Partial<LocalSpawnRequest>) => {
  try {
    plan(overrides);
  } catch (error) {
    expect(InvalidArgumentsError.isInstance(error)).toBe(true);
    return (error as InvalidArgumentsError).issues;
  }
  throw new Error('planned');
};

describe('planWindowsSpawn (golden)', () => {
  it('hands node-pty a ConPTY spawn: full program path, the rest of the command line verbatim, the exact env', () => {
    expect(plan({ tty: true, stdin: 'pipe', size: { rows: 30, cols: 100 } })).toEqual({
      kind: 'pty',
      program: 'C:\\Windows\\System32\\cmd.exe',
      file: 'C:\\Windows\\System32\\cmd.exe',
      args: '/d /s /c "echo \\"hi there\\" & exit /b 3"',
      options: {
        cols: 100,
        rows: 30,
        cwd: 'C:\\work',
        env: WINDOWS_TEST_ENV,
        useConpty: true,
        useConptyDll: false,
        conptyInheritCursor: false,
      },
      commandLine: 'C:\\Windows\\System32\\cmd.exe /d /s /c "echo \\"hi there\\" & exit /b 3"',
    });
  });

  it('quotes a program path with spaces, and uses 80×24 without a size', () => {
    const pty = plan({ argv: ['bash', '-lc', 'echo ok'], tty: true });
    expect(pty.commandLine).toBe('"C:\\Program Files\\Git\\bin\\bash.exe" -lc "echo ok"');
    expect(pty.kind === 'pty' && [pty.options.cols, pty.options.rows]).toEqual([80, 24]);
  });

  it('hands child_process a hidden-console pipe spawn with argv0 and a stdin pipe when wanted', () => {
    expect(plan({ stdin: 'pipe', arg0: 'my cmd' })).toEqual({
      kind: 'pipe-with-stdin',
      program: 'C:\\Windows\\System32\\cmd.exe',
      file: 'C:\\Windows\\System32\\cmd.exe',
      args: ['/d', '/s', '/c', 'echo "hi there" & exit /b 3'],
      options: {
        cwd: 'C:\\work',
        env: WINDOWS_TEST_ENV,
        argv0: 'my cmd',
        windowsHide: true,
        windowsVerbatimArguments: false,
        detached: false,
        shell: false,
        stdio: ['pipe', 'pipe', 'pipe'],
      },
      commandLine: '"my cmd" /d /s /c "echo \\"hi there\\" & exit /b 3"',
    });
  });

  it('gives a pipe child without stdin nothing to read, and copies the env rather than sharing it', () => {
    const pipe = plan({});
    expect(pipe.kind).toBe('pipe');
    expect(pipe.kind !== 'pty' && pipe.options.stdio).toEqual(['ignore', 'pipe', 'pipe']);
    expect(pipe.kind !== 'pty' && pipe.options.argv0).toBe('cmd.exe');
    expect(pipe.options.env).not.toBe(WINDOWS_TEST_ENV);
  });
});

describe('planWindowsSpawn refuses', () => {
  it('an empty argv', () => {
    expect(() => plan({ argv: [] })).toThrow(MissingCommandLineError);
  });

  it('NUL bytes, bad names, names that differ only in case, bad sizes, arg0 on a PTY, an escalation socket', () => {
    expect(
      issues({
        argv: ['cmd.exe', 'a\0b'],
        env: { Path: 'C:\\Windows\\System32', PATH: 'C:\\x', 'A=B': '1', C: 'x\0' },
        tty: true,
        size: { rows: 0, cols: 80 },
        arg0: 'other',
        escalation: { socketPath: '/tmp/s', token: 'ab'.repeat(8), fd: 63 },
      }).map((issue) => issue.path),
    ).toEqual(['argv[1]', 'env.A=B', 'env.C', 'size', 'env.PATH', 'arg0', 'escalation']);
    expect(issues({ env: { Path: 'C:\\Windows\\System32', PATH: 'C:\\x' } })[0]!.message).toBe(
      'names the same variable as env.Path (Windows variable names ignore case)',
    );
  });

  it('a command line longer than CreateProcess takes', () => {
    expect(issues({ argv: ['cmd.exe', 'x'.repeat(32_767)] })[0]!.message).toMatch(/at most 32766/);
  });

  it('a pipe arg0 no command line can carry (windowsCommandLine of @ux/protocol)', () => {
    expect(issues({ stdin: 'pipe', arg0: 'my "cmd"' })[0]!.message).toMatch(/contains a quote/);
    expect(() => plan({ stdin: 'pipe', arg0: 'my "cmd"' })).toThrow(/^invalid spawn arguments: argv:/);
  });

  it('a working directory that is relative, missing or a file, before looking for the program', () => {
    for (const [cwd, reason] of [
      ['work', 'is not an absolute path'],
      ['\\work', 'is not an absolute path'],
      ['C:\\missing', 'does not exist'],
      ['C:\\work\\local.exe', 'is not a directory'],
    ] as const) {
      const error = (() => {
        try {
          plan({ cwd, argv: ['nowhere.exe'] });
        } catch (caught) {
          return caught;
        }
      })();
      expect(SpawnFailedError.isInstance(error), cwd).toBe(true);
      expect((error as SpawnFailedError).reason).toContain(reason);
    }
  });
});
