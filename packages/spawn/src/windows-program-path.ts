import { statSync } from 'node:fs';
import { win32 } from 'node:path';
import { SpawnFailedError } from '@ux/protocol/core';

/** What the Windows planner asks of the file system: what a path is, if anything. */
export type WindowsPathKind = (path: string) => 'file' | 'directory' | undefined;

/** The file system of this machine, for `windowsProgramPath` and `planWindowsSpawn`. */
export const nodeWindowsPathKind: WindowsPathKind = (path) => {
  try {
    const stat = statSync(path);
    return stat.isDirectory() ? 'directory' : stat.isFile() ? 'file' : undefined;
  } catch {
    return undefined;
  }
};

/** The extensions CreateProcess can start, in the order tried when PATHEXT does not say otherwise. */
const STARTABLE = ['.com', '.exe', '.bat', '.cmd'];
const BATCH = /\.(bat|cmd)$/i;

/** The value of an environment variable, by Windows rules (names are case-insensitive). */
export function windowsEnvValue(env: Readonly<Record<string, string>>, name: string): string | undefined {
  const wanted = name.toUpperCase();
  for (const [key, value] of Object.entries(env)) if (key.toUpperCase() === wanted) return value;
  return undefined;
}

/**
 * Finds the file `argv[0]` names, as Windows would, with the child's own `PATH` and `PATHEXT`, so a
 * missing program is a clear error before anything starts and the child is started by full path. A
 * name with a directory part is taken relative to `cwd`; a bare name is looked up on `PATH` only (the
 * current directory is not searched, as with `NoDefaultCurrentDirectoryInExePath`). A name without an
 * extension is tried with each PATHEXT extension that CreateProcess can start (`.COM`, `.EXE`, `.BAT`,
 * `.CMD`). A batch file is refused: CreateProcess would run it through cmd.exe with cmd's own parsing
 * (and Node refuses it since CVE-2024-27980), so it must be run as `cmd.exe /d /s /c "…"` explicitly.
 */
export function windowsProgramPath(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string,
  kind: WindowsPathKind,
): string {
  const name = argv[0]!;
  const fail = (path: string, reason: string) => new SpawnFailedError({ command: argv, path, reason });
  if (name.includes('"')) throw fail(name, 'a program name cannot contain a quote on Windows');
  const pathExt = (windowsEnvValue(env, 'PATHEXT') ?? '.COM;.EXE;.BAT;.CMD')
    .split(';')
    .map((ext) => ext.trim().toLowerCase())
    .filter((ext) => STARTABLE.includes(ext));
  const extensions = pathExt.length > 0 ? pathExt : STARTABLE;
  const candidates = (base: string) => [
    ...(win32.extname(base) !== '' ? [base] : []),
    ...extensions.map((ext) => `${base}${ext}`),
  ];
  const found = (base: string) => candidates(base).find((candidate) => kind(candidate) === 'file');
  const checked = (path: string) => {
    if (BATCH.test(path))
      throw fail(path, 'is a batch file: run it through cmd.exe explicitly (cmd.exe /d /s /c "…")');
    return path;
  };

  if (/[\\/]/.test(name) || /^[a-zA-Z]:/.test(name)) {
    const path = win32.resolve(cwd, name);
    if (kind(path) === 'directory') throw fail(path, 'is a directory');
    const file = found(path);
    if (!file) throw fail(path, 'no such file');
    return checked(file);
  }
  const searchPath = windowsEnvValue(env, 'PATH');
  if (searchPath === undefined) throw fail(name, 'not found: the environment has no PATH');
  for (const entry of searchPath.split(';')) {
    const directory = entry.trim().replace(/^"(.*)"$/, '$1');
    if (directory === '' || !win32.isAbsolute(directory)) continue;
    const file = found(win32.join(directory, name));
    if (file) return checked(file);
  }
  throw fail(name, `not found on PATH (${searchPath})`);
}

/** A clear error when the working directory is not an absolute path to an existing directory. */
export function checkWindowsWorkingDirectory(
  argv: readonly string[],
  cwd: string,
  kind: WindowsPathKind,
): void {
  let reason: string | undefined;
  if (!win32.isAbsolute(cwd) || /^[\\/](?![\\/])/.test(cwd))
    reason = `working directory ${cwd} is not an absolute path with a drive or share`;
  else if (kind(cwd) === undefined) reason = `working directory ${cwd} does not exist`;
  else if (kind(cwd) !== 'directory') reason = `working directory ${cwd} is not a directory`;
  if (reason) throw new SpawnFailedError({ command: argv, path: cwd, reason });
}
