import { win32 } from 'node:path';
import type { WindowsPathKind } from '../src/windows-program-path.js';

/** A Windows file system in memory for the planner's tests: paths compared without case, as NTFS does. */
export function fakeWindowsPathKind(
  files: readonly string[],
  directories: readonly string[],
): WindowsPathKind {
  const kinds = new Map<string, 'file' | 'directory'>();
  for (const directory of directories) kinds.set(win32.normalize(directory).toLowerCase(), 'directory');
  for (const file of files) kinds.set(win32.normalize(file).toLowerCase(), 'file');
  return (path) => kinds.get(win32.normalize(path).toLowerCase());
}

export const WINDOWS_TEST_FS = fakeWindowsPathKind(
  [
    'C:\\Windows\\System32\\cmd.exe',
    'C:\\Windows\\System32\\where.com',
    'C:\\Windows\\System32\\where.exe',
    'C:\\Program Files\\Git\\bin\\bash.exe',
    'C:\\work\\tools\\build.cmd',
    'C:\\work\\tools\\fmt.exe',
    'C:\\work\\local.exe',
    'C:\\work\\script.ps1',
  ],
  ['C:\\Windows\\System32', 'C:\\Program Files\\Git\\bin', 'C:\\work', 'C:\\work\\tools'],
);

export const WINDOWS_TEST_ENV = {
  Path: 'C:\\Windows\\System32;"C:\\Program Files\\Git\\bin";relative\\bin;',
  PATHEXT: '.COM;.EXE;.BAT;.CMD;.VBS;.PS1',
  SystemRoot: 'C:\\Windows',
};
