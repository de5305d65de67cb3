import { chmodSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { release } from 'node:os';
import { dirname } from 'node:path';

/** What a successful probe learned about one bwrap binary on one kernel. */
export interface CachedProbe {
  version: string;
  disableUserns: boolean;
  argv0: boolean;
}

/** Bump when what the probe checks changes, so old entries are not trusted. */
const FORMAT = 1;

/**
 * The key a cached probe must match: the binary (path, inode, size, modification time), the kernel
 * release, the user and the architecture. Any of them changing means probing again.
 */
function probeKey(bwrapPath: string): string | undefined {
  try {
    const stat = statSync(bwrapPath);
    return JSON.stringify([
      FORMAT,
      bwrapPath,
      stat.ino,
      stat.size,
      stat.mtimeMs,
      release(),
      process.getuid?.(),
      process.arch,
    ]);
  } catch {
    return undefined;
  }
}

/**
 * Reads a cached successful probe. A file that is not ours or that others can write is ignored: a
 * forged entry could otherwise claim features (`--disable-userns`) this bwrap lacks. A stale entry
 * is harmless: bwrap then fails to start, which is never taken for a denial.
 */
export function readProbeCache(file: string, bwrapPath: string): CachedProbe | undefined {
  try {
    const stat = statSync(file);
    if (stat.uid !== process.getuid?.() || (stat.mode & 0o022) !== 0) return undefined;
    const entry = JSON.parse(readFileSync(file, 'utf8')) as { key?: string; probe?: CachedProbe };
    const key = probeKey(bwrapPath);
    if (!key || entry.key !== key || !entry.probe) return undefined;
    const { version, disableUserns, argv0 } = entry.probe;
    if (typeof version !== 'string' || typeof disableUserns !== 'boolean' || typeof argv0 !== 'boolean')
      return undefined;
    return { version, disableUserns, argv0 };
  } catch {
    return undefined;
  }
}

/** Saves a successful probe (0600, in a 0700 directory, replaced atomically). Failures are not cached. */
export function writeProbeCache(file: string, bwrapPath: string, probe: CachedProbe): void {
  const key = probeKey(bwrapPath);
  if (!key) return;
  try {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const temporary = `${file}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify({ key, probe }), { mode: 0o600 });
    chmodSync(temporary, 0o600);
    renameSync(temporary, file);
  } catch {
    // A cache that cannot be written only costs the next start a probe.
  }
}
