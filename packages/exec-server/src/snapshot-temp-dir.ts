import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const PREFIX = 'ux-exec-server-';

/**
 * A new private (0700) directory for one server's shell snapshots, named after the server's pid, in
 * `parent` (default the system's temporary directory). A server killed with SIGKILL cannot remove its
 * own; so each new one first removes those of this user whose server is gone (no process with that pid).
 */
export function snapshotTempDir(parent = tmpdir(), pid = process.pid): string {
  removeOrphans(parent);
  return mkdtempSync(join(parent, `${PREFIX}${pid}-`));
}

function removeOrphans(parent: string): void {
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const pid = Number(/^ux-exec-server-(\d+)-[A-Za-z0-9]{6}$/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || pid <= 0 || pid === process.pid || alive(pid)) continue;
    const path = join(parent, name);
    try {
      const stats = statSync(path);
      if (!stats.isDirectory() || (uid !== undefined && stats.uid !== uid)) continue;
      rmSync(path, { recursive: true, force: true });
    } catch {
      // Gone meanwhile, or not ours to remove.
    }
  }
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
