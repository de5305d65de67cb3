import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
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
        // The link's text costs no file system a visit; only what is safe to stat is stat'ed.
        if (!STAT_SAFE.test(readlinkSync(path))) return undefined;
        const stats = statSync(path);
        return { dev: stats.dev, ino: stats.ino, rdev: stats.rdev };
      } catch {
        return undefined;
      }
    },
  };
}

/** Terminals and device nodes, pipes and sockets: their `stat` never waits on anyone. */
const STAT_SAFE = /^(\/dev\/|pipe:\[|socket:\[)/;
