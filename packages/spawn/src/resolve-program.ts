import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { SpawnFailedError } from '@ux/protocol/core';

/**
 * Finds the file `argv[0]` names, as execvp would with the child's own PATH, so a missing or
 * unusable program is a clear error before anything starts (a PTY child cannot report it otherwise).
 */
export function resolveProgram(
  argv: readonly string[],
  env: Readonly<Record<string, string>>,
  cwd: string,
): string {
  const program = argv[0]!;
  if (program.includes('/')) {
    const path = isAbsolute(program) ? program : resolve(cwd, program);
    const problem = unusable(path);
    if (problem) throw new SpawnFailedError({ command: argv, path, reason: problem });
    return path;
  }
  const searchPath = env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  for (const directory of searchPath.split(delimiter)) {
    const candidate = resolve(cwd, join(directory || '.', program));
    if (!unusable(candidate)) return candidate;
  }
  throw new SpawnFailedError({ command: argv, path: program, reason: `not found on PATH (${searchPath})` });
}

function unusable(path: string): string | undefined {
  try {
    if (statSync(path).isDirectory()) return 'is a directory';
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'no such file';
    if (code === 'EACCES') return 'permission denied (not executable)';
    return (error as Error).message;
  }
}

/** A clear error when the working directory is missing or not a directory. */
export function checkWorkingDirectory(argv: readonly string[], cwd: string): void {
  let reason: string | undefined;
  if (!isAbsolute(cwd)) reason = `working directory ${cwd} is not an absolute path`;
  else {
    try {
      if (!statSync(cwd).isDirectory()) reason = `working directory ${cwd} is not a directory`;
    } catch {
      reason = `working directory ${cwd} does not exist`;
    }
  }
  if (reason) throw new SpawnFailedError({ command: argv, path: cwd, reason });
}
