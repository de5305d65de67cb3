import { closeSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import type { FileIdentity, ProcReader } from './input-wait.js';

/**
 * The real /proc, read synchronously (each file is a few hundred bytes the kernel writes on the spot).
 * A directory (`/proc/<pid>/task`) reads as its names, one a line. Anything that cannot be read (a
 * process that ended, a file this user may not read) is undefined, never an error.
 */
export function procReader(): ProcReader {
  return {
    readText(path) {
      try {
        if (path.endsWith('/task')) return readdirSync(path).join('\n');
        return readFileSync(path, 'latin1');
      } catch {
        return undefined;
      }
    },
    stat(path): FileIdentity | undefined {
      try {
        const stats = statSync(path);
        return { dev: stats.dev, ino: stats.ino, rdev: stats.rdev };
      } catch {
        return undefined;
      }
    },
    readMemory(pid, address, length) {
      let fd: number | undefined;
      try {
        fd = openSync(`/proc/${pid}/mem`, 'r');
        const bytes = Buffer.alloc(length);
        const read = readSync(fd, bytes, 0, length, address);
        return read === length ? bytes : undefined;
      } catch {
        return undefined;
      } finally {
        if (fd !== undefined) closeSync(fd);
      }
    },
  };
}
