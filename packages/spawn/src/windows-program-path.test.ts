import { SpawnFailedError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { WINDOWS_TEST_ENV, WINDOWS_TEST_FS } from '../test/windows-test-fs.js';
import { windowsEnvValue, windowsProgramPath } from './windows-program-path.js';

const resolve = (name: string, env: Record<string, string> = WINDOWS_TEST_ENV) =>
  windowsProgramPath([name, 'x'], env, 'C:\\work', WINDOWS_TEST_FS);
const failure = (name: string, env?: Record<string, string>) => {
  try {
    resolve(name, env);
  } catch (error) {
    expect(SpawnFailedError.isInstance(error)).toBe(true);
    return error as SpawnFailedError;
  }
  throw new Error(`${name} resolved`);
};

describe('windowsProgramPath', () => {
  it('finds a bare name on PATH with the PATHEXT extensions CreateProcess can start, in PATHEXT order', () => {
    expect(resolve('cmd')).toBe('C:\\Windows\\System32\\cmd.exe');
    expect(resolve('cmd.exe')).toBe('C:\\Windows\\System32\\cmd.exe');
    expect(resolve('where')).toBe('C:\\Windows\\System32\\where.com');
    expect(resolve('where', { ...WINDOWS_TEST_ENV, PATHEXT: '.EXE;.COM' })).toBe(
      'C:\\Windows\\System32\\where.exe',
    );
    // A quoted PATH entry is unquoted; the variable's name is matched without case.
    expect(resolve('bash', { PATH: WINDOWS_TEST_ENV.Path })).toBe('C:\\Program Files\\Git\\bin\\bash.exe');
  });

  it('takes a name with a directory part relative to cwd, and never searches cwd for a bare name', () => {
    expect(resolve('tools\\fmt')).toBe('C:\\work\\tools\\fmt.exe');
    expect(resolve('.\\local.exe')).toBe('C:\\work\\local.exe');
    expect(resolve('C:/work/tools/fmt.exe')).toBe('C:\\work\\tools\\fmt.exe');
    expect(failure('local').reason).toBe(`not found on PATH (${WINDOWS_TEST_ENV.Path})`);
  });

  it('refuses batch files, directories, scripts CreateProcess cannot start, and missing programs', () => {
    expect(failure('tools\\build').reason).toMatch(/batch file: run it through cmd.exe explicitly/);
    expect(failure('C:\\work\\tools\\build.cmd').path).toBe('C:\\work\\tools\\build.cmd');
    expect(failure('.\\tools').reason).toBe('is a directory');
    expect(failure('.\\script').reason).toBe('no such file');
    expect(failure('nope', { SystemRoot: 'C:\\Windows' }).reason).toBe(
      'not found: the environment has no PATH',
    );
    expect(failure('a"b.exe').reason).toMatch(/quote/);
  });

  it('reads variables without case', () => {
    expect(windowsEnvValue({ pAtH: 'x' }, 'PATH')).toBe('x');
    expect(windowsEnvValue({ PATHEXT: 'y' }, 'Path')).toBeUndefined();
  });
});
