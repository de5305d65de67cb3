import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { controlSocketPid } from './control-paths.js';

/**
 * Removes the sockets of processes that are gone (a ux killed with SIGKILL leaves its socket). A pid
 * that is alive keeps its socket even when reused by another program: connecting tells them apart,
 * and the lister skips what does not answer `hello`.
 */
export function sweepStaleControlSockets(dir: string): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = controlSocketPid(name);
    if (pid === undefined || pid === process.pid || isAlive(pid)) continue;
    const path = join(dir, name);
    try {
      if (lstatSync(path).isSocket()) rmSync(path, { force: true });
    } catch {
      // Gone meanwhile.
    }
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
