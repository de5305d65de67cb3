import { type BigIntStats, lstatSync, statSync } from 'node:fs';

/**
 * The earliest `ctime` (in ns) that counts as "during the session": the start itself, to the
 * microsecond (`sessionStartMs` may be fractional). The kernel stamps files from a coarse clock that
 * trails the host clock by at most one tick (1 to 10 ms), so a change made within that tick after the
 * start could look older; no sandboxed command runs that early (the start is taken when the
 * orchestrator is made, before the door that starts commands exists), and a file made just before the
 * start (a workspace set up by a script) is not mistaken for the session's.
 */
function thresholdNs(sessionStartMs: number): bigint {
  return BigInt(Math.floor(sessionStartMs * 1000)) * 1000n;
}

/** Now, to the microsecond, on the host clock: a session's start. */
export function preciseNowMs(): number {
  return performance.timeOrigin + performance.now();
}

/** `lstat` with nanosecond times, or undefined when nothing is there. */
export function lstatNs(path: string): BigIntStats | undefined {
  try {
    return lstatSync(path, { bigint: true });
  } catch {
    return undefined;
  }
}

/** `stat` (links followed) with nanosecond times, or undefined when nothing is there. */
export function statNs(path: string): BigIntStats | undefined {
  try {
    return statSync(path, { bigint: true });
  } catch {
    return undefined;
  }
}

/**
 * Whether the entry was created or changed since the session started: its `ctime` (status change:
 * content, mode, owner, links, rename) is at or after the start. A sandboxed process can set `mtime`
 * back (`touch -d`), never `ctime`.
 */
export function changedSince(stat: BigIntStats, sessionStartMs: number): boolean {
  return stat.ctimeNs >= thresholdNs(sessionStartMs);
}

/**
 * Whether the entry was created since the session started, where the file system records a birth time
 * (`statx` on ext4, btrfs, xfs, tmpfs); undefined where it does not.
 */
export function bornSince(stat: BigIntStats, sessionStartMs: number): boolean | undefined {
  if (stat.birthtimeNs === 0n) return undefined;
  return stat.birthtimeNs >= thresholdNs(sessionStartMs);
}

/**
 * Whether `path` (the entry itself, and the file a link leads to) was created or changed during the
 * session; false when nothing is there.
 */
export function entryChangedSince(path: string, sessionStartMs: number): boolean {
  const own = lstatNs(path);
  if (!own) return false;
  if (changedSince(own, sessionStartMs)) return true;
  if (!own.isSymbolicLink()) return false;
  const target = statNs(path);
  return target !== undefined && changedSince(target, sessionStartMs);
}
