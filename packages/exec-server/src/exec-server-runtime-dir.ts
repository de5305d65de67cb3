import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { createProcessRuntimeDir, ensureUxRuntimeRoot, runtimeDirPid } from '@ux/protocol-utils';
import { removePath } from './remove-path.js';

/** What this server's runtime directories are called inside the runtime root: `exec-server-PID-RANDOM`. */
export const EXEC_SERVER_RUNTIME_KIND = 'exec-server';

/**
 * A new private directory (0700) for this server's runtime files (its shell snapshots), inside the
 * per-user runtime root of `@ux/protocol/core` (`/run/user/UID/ux` or `/tmp/ux-UID`, checked: the
 * user's own, not a link, no access for others). Every sandbox of every ux process hides that root, so
 * no sandboxed command — of this server or of any other ux process of the user — can read or rewrite
 * what lies there. A server killed with SIGKILL cannot remove its own, so each new one also sweeps
 * those whose server is gone (`sweepOrphanRuntimeDirs`, in the background; `onSwept` hears of each).
 */
export function execServerRuntimeDir(
  options: { root?: string; onSwept?: (path: string) => void; onSweepError?: (error: unknown) => void } = {},
): string {
  const root = ensureUxRuntimeRoot(options.root);
  const dir = createProcessRuntimeDir(EXEC_SERVER_RUNTIME_KIND, root);
  void sweepOrphanRuntimeDirs(root).then(
    (removed) => {
      for (const path of removed) options.onSwept?.(path);
    },
    (error: unknown) => options.onSweepError?.(error),
  );
  return dir;
}

/**
 * Removes the exec-server runtime directories in `root` whose server is gone: only entries named
 * `exec-server-PID-RANDOM` (`runtimeDirPid`), only real directories (`lstat`: a link is never
 * followed, nor removed) owned by this user, only when no process has that pid. Each goes through
 * `removePath`, which never follows a link at any depth. Returns the paths removed.
 */
export async function sweepOrphanRuntimeDirs(root: string): Promise<string[]> {
  const removed: string[] = [];
  const uid = process.getuid?.();
  for (const name of await readdir(root)) {
    if (!name.startsWith(`${EXEC_SERVER_RUNTIME_KIND}-`)) continue;
    const pid = runtimeDirPid(name);
    if (pid === undefined || pid <= 0 || pid === process.pid || alive(pid)) continue;
    const path = join(root, name);
    try {
      const info = await lstat(path);
      if (!info.isDirectory() || (uid !== undefined && info.uid !== uid)) continue;
      await removePath(path, { recursive: true });
      removed.push(path);
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
  return removed;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: a process of another user holds the pid; it is alive.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
