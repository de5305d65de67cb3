import { lstatSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureUxRuntimeRoot, uxRuntimeRoot } from '@ux/protocol-utils';
import { ControlError } from './control-error.js';

/** Where the control sockets of this user's ux processes live: `<runtime root>/control`. */
export function controlDirectory(runtimeRoot: string = uxRuntimeRoot()): string {
  return join(runtimeRoot, 'control');
}

/** The socket a process serves: `<runtime root>/control/<pid>.sock`. */
export function controlSocketPath(pid: number, runtimeRoot?: string): string {
  return join(controlDirectory(runtimeRoot), `${pid}.sock`);
}

/** The pid a socket's name carries (`1234.sock` → 1234), else undefined. */
export function controlSocketPid(name: string): number | undefined {
  const match = /^([1-9]\d{0,9})\.sock$/.exec(name);
  return match ? Number(match[1]) : undefined;
}

/**
 * Makes (0700) and checks the control directory: a directory of this user, not a link, closed to
 * others. The runtime root it lives in is checked the same way and hidden in every sandbox, so only
 * this user's ux processes outside any sandbox can serve or reach a control socket.
 */
export function ensureControlDirectory(runtimeRoot?: string): string {
  const root = ensureUxRuntimeRoot(runtimeRoot ?? uxRuntimeRoot());
  const dir = controlDirectory(root);
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  checkOwnDirectory(dir);
  return dir;
}

/** Throws `unavailable` unless `dir` is this user's own directory (not a link), closed to others. */
export function checkOwnDirectory(dir: string): void {
  const stat = lstatSync(dir);
  const uid = process.getuid?.();
  const problem = stat.isSymbolicLink()
    ? 'is a symbolic link'
    : !stat.isDirectory()
      ? 'is not a directory'
      : uid !== undefined && stat.uid !== uid
        ? `belongs to uid ${stat.uid}`
        : uid !== undefined && (stat.mode & 0o077) !== 0
          ? `is open to others (mode ${(stat.mode & 0o777).toString(8)})`
          : undefined;
  if (problem)
    throw new ControlError(
      'unavailable',
      `ux's control directory ${dir} ${problem}; remove it (rm -rf ${dir}) and retry`,
    );
}
