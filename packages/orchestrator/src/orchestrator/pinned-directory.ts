import { closeSync, constants, fstatSync, openSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { dirname } from 'node:path';

/** A directory's `st_dev` and `st_ino`, as decimal strings (64-bit values do not fit a JSON number). */
export interface DirectoryIdentity {
  readonly dev: string;
  readonly ino: string;
}

/**
 * How a check reaches a path: unchanged, or through the descriptors of a pinned directory and the
 * directories above it (`/proc/self/fd/N/rest`), so that a directory swapped or renamed on the way
 * since it was opened cannot make the check look somewhere else.
 */
export type Reach = (path: string) => string;

/** Paths as they are: a walk from `/` at each access. */
export const byPath: Reach = (path) => path;

/**
 * A working directory opened once, with each directory above it (`..` from its descriptor, up to
 * `/`), held open until `release()`. The checks of an escalation reach every name in these directories
 * through the descriptors (`reach`), and the broker later compares the directory it enters, and the ones
 * above it, with `identity` and `ancestors`: what runs is in the directory that was checked, below the
 * directories that were checked, or does not run. Holding the descriptors until the broker has
 * compared keeps their inode numbers from being reused by a directory made meanwhile.
 */
export interface PinnedDirectory {
  /** Its canonical path when it was opened (what the kernel names for the descriptor). */
  readonly path: string;
  readonly identity: DirectoryIdentity;
  /** The directories above it, the parent first, up to `/` (empty for `/` itself). */
  readonly ancestors: readonly DirectoryIdentity[];
  /**
   * `path` or a path below it or below one of the directories above it (`dirname`s of `path`), as
   * reached through the deepest of their descriptors; any other path unchanged. Paths must be
   * absolute and normalized (no `.` or `..` parts), as `join` and `resolve` make them.
   */
  readonly reach: Reach;
  /** Closes the descriptors (again: nothing). */
  release(): void;
}

export type PinResult =
  | { pinned: PinnedDirectory }
  | {
      pinned?: undefined;
      /** `missing`: nothing to enter there; `moved`: it moved while it was opened; `unreadable`: cannot be opened. */
      problem: 'missing' | 'moved' | 'unreadable';
      detail?: string;
    };

/**
 * `O_PATH` (Linux: `010000000` on every architecture Node runs on; not in `fs.constants`): a
 * descriptor for a directory the user may enter but not list, as `chdir` needs only search permission.
 */
const O_PATH = 0o10000000;
const DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY;
/** More levels than a path of 4096 bytes can hold. */
const MAX_LEVELS = 2048;

/**
 * Opens the directory at `path` once, as `chdir` would resolve it (links followed), then each directory
 * above it through `..` of the one below, and checks that they line up with the path the kernel names
 * for it (as many levels as that path has parts, ending at `/`): otherwise something moved while they
 * were opened. Linux only for `reach` (through `/proc/self/fd`); elsewhere `reach` is `byPath` and only
 * the identities are pinned.
 */
export function pinDirectory(path: string): PinResult {
  let fd: number;
  try {
    fd = openDirectory(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP')
      return { problem: 'missing', detail: code };
    return { problem: 'unreadable', detail: code ?? String(error) };
  }
  const fds = [fd];
  const release = () => {
    for (const open of fds.splice(0)) {
      try {
        closeSync(open);
      } catch {}
    }
  };
  try {
    const own = fstatSync(fd, { bigint: true });
    if (own.nlink === 0n) {
      release();
      return { problem: 'missing', detail: 'removed' };
    }
    const linux = process.platform === 'linux';
    const real = linux ? readlinkSync(`/proc/self/fd/${fd}`) : canonical(path);
    if (!real.startsWith('/')) {
      release();
      return { problem: 'missing', detail: 'not reachable from /' };
    }
    const ancestors: DirectoryIdentity[] = [];
    if (linux) {
      let below = own;
      for (let level = 0; level < MAX_LEVELS; level++) {
        const parent = openDirectory(`/proc/self/fd/${fds[fds.length - 1]}/..`);
        const stat = fstatSync(parent, { bigint: true });
        if (stat.dev === below.dev && stat.ino === below.ino) {
          closeSync(parent);
          break;
        }
        fds.push(parent);
        ancestors.push(identityOf(stat));
        below = stat;
      }
    } else {
      for (let at = real; at !== '/'; at = dirname(at))
        ancestors.push(identityOf(statSync(dirname(at), { bigint: true })));
    }
    const parts = real.split('/').filter((part) => part !== '');
    const root = statSync('/', { bigint: true });
    const top = ancestors.length > 0 ? ancestors[ancestors.length - 1]! : identityOf(own);
    if (ancestors.length !== parts.length || top.dev !== `${root.dev}` || top.ino !== `${root.ino}`) {
      release();
      return { problem: 'moved' };
    }
    // fds[k] is the directory at the path of `real` without its last k parts.
    const levels = linux
      ? fds.map((open, k) => ({
          path: k === 0 ? real : `/${parts.slice(0, parts.length - k).join('/')}`,
          open,
        }))
      : [];
    // `/` itself is reached as `/`: nothing can swap it.
    const reach: Reach = linux
      ? (target) => {
          for (const { path: at, open } of levels) {
            if (at === '/') break;
            if (target === at) return `/proc/self/fd/${open}/.`;
            if (target.startsWith(`${at}/`)) return `/proc/self/fd/${open}${target.slice(at.length)}`;
          }
          return target;
        }
      : byPath;
    return {
      pinned: { path: real, identity: identityOf(own), ancestors, reach, release },
    };
  } catch (error) {
    release();
    return { problem: 'unreadable', detail: (error as NodeJS.ErrnoException).code ?? String(error) };
  }
}

/**
 * The canonical path of what `path` names (links followed), as the kernel resolves it through `reach`:
 * the entry is opened (`O_PATH`, which neither reads nor blocks) and its descriptor's name is read.
 * Never `realpath`, which resolves `/proc/self/fd/N` to a name and walks that name again. Undefined
 * when nothing is there.
 */
export function canonicalPath(path: string, reach: Reach = byPath): string | undefined {
  if (reach === byPath || process.platform !== 'linux') {
    try {
      return realpathSync(path);
    } catch {
      return undefined;
    }
  }
  let fd: number;
  try {
    fd = openSync(reach(path), O_PATH);
  } catch {
    return undefined;
  }
  try {
    const name = readlinkSync(`/proc/self/fd/${fd}`);
    return name.startsWith('/') ? name : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

function openDirectory(path: string): number {
  try {
    return openSync(path, DIRECTORY);
  } catch (error) {
    // A directory one may enter but not list (mode 0711): chdir works there, so the pin must too.
    if ((error as NodeJS.ErrnoException).code !== 'EACCES' || process.platform !== 'linux') throw error;
    return openSync(path, O_PATH | constants.O_DIRECTORY);
  }
}

function identityOf(stat: { dev: bigint; ino: bigint }): DirectoryIdentity {
  return { dev: `${stat.dev}`, ino: `${stat.ino}` };
}

function canonical(path: string): string {
  return realpathSync(path);
}
