import { constants, existsSync, type Stats } from 'node:fs';
import { type FileHandle, lstat, open, readlink, stat } from 'node:fs/promises';
import { markError, UxError } from '@ux/protocol/core';

/**
 * `O_PATH` (Linux): a descriptor that names a file without opening it — no driver `open` of a device,
 * no wait for a FIFO's other end, no lease break. Its value on every architecture Node runs on for
 * Linux (x64, arm, arm64, ppc64, s390x, riscv64, loong64); `O_PATH` is not in `fs.constants`.
 */
const O_PATH = 0o10000000;
// No O_CLOEXEC here: libuv adds it to every open (it is not even in `fs.constants`).

/** Descriptor-anchored reopening needs Linux's `/proc/self/fd` and `O_PATH`. */
const LINUX_ARCHES = new Set(['x64', 'ia32', 'arm', 'arm64', 'ppc64', 's390x', 'riscv64', 'loong64']);

let procAnchors: boolean | undefined;

/** Whether `/proc/self/fd/N` can stand for a descriptor here (Linux with /proc mounted). */
export function canAnchorOnDescriptors(): boolean {
  procAnchors ??=
    process.platform === 'linux' && LINUX_ARCHES.has(process.arch) && existsSync('/proc/self/fd');
  return procAnchors;
}

/** What a non-regular file is, in words a person reads in an error. */
export function describeFileType(stats: Stats): string {
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  if (stats.isDirectory()) return 'a directory';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isFile()) return 'a regular file';
  return 'not a regular file';
}

const NOT_REGULAR_FILE = 'ux.error.not-regular-file';

/** The path is something other than a regular file (or a link the operation will not follow). */
export class NotRegularFileError extends UxError {
  constructor(
    readonly path: string,
    /** `describeFileType`'s words: `a FIFO (named pipe)`, `a character device`, `a symbolic link`, … */
    readonly kind: string,
    /** Where a followed link led, when the path was one. */
    readonly target?: string,
  ) {
    super(
      'not_regular_file',
      `${path}${target !== undefined && target !== path ? ` (a link to ${target})` : ''} is ${kind}`,
    );
    this.name = 'NotRegularFileError';
    markError(this, NOT_REGULAR_FILE);
  }
  static override isInstance(error: unknown): error is NotRegularFileError {
    return UxError.hasMarker(error, NOT_REGULAR_FILE);
  }
  override toJSON() {
    return { ...super.toJSON(), path: this.path, kind: this.kind, target: this.target };
  }
}

export interface OpenRegularFileOptions {
  /** `read` (`O_RDONLY`) or `write` (`O_WRONLY`, truncated; created 0666 & ~umask when missing). */
  access: 'read' | 'write';
  /**
   * Whether a symbolic link in the last component is followed (reads only; a write never follows
   * one). Links in the directories above are always resolved, as for any path.
   */
  followLink: boolean;
  /** Tests: force the portable path-based way (what runs where `/proc/self/fd` is missing). */
  anchorOnDescriptors?: boolean;
}

export interface OpenedRegularFile {
  handle: FileHandle;
  /** `fstat` of the opened descriptor: a regular file. */
  stats: Stats;
}

/**
 * Opens `path` only if it is a regular file, so that nothing a sandboxed command can plant at a path
 * (a FIFO, a link to `/dev/zero` or `/proc/kmsg`, a socket, a device) can make the caller wait, read
 * without end, or set off a device's open. Every descriptor is non-blocking (`O_NONBLOCK`: a FIFO, a
 * file under a lease or a blocking special file answers at once instead of waiting), close-on-exec,
 * and never becomes a controlling terminal (`O_NOCTTY`).
 *
 * On Linux the path is first opened with `O_PATH` (which opens nothing), its descriptor checked with
 * `fstat`, and only a regular file is then opened for real, through `/proc/self/fd/N`: the same inode,
 * so a swap of the path in between changes nothing. Elsewhere the path is checked, opened
 * non-blocking, and its descriptor checked again (same device and inode, a regular file).
 *
 * Throws `NotRegularFileError` for anything else (nothing is read or written), and the system's
 * error (`ENOENT`, `EACCES`, `ELOOP`, `EAGAIN`) otherwise. The caller closes the handle.
 */
export async function openRegularFile(
  path: string,
  options: OpenRegularFileOptions,
): Promise<OpenedRegularFile> {
  const followLink = options.access === 'read' && options.followLink;
  const anchored = options.anchorOnDescriptors ?? canAnchorOnDescriptors();
  const base = constants.O_NONBLOCK | constants.O_NOCTTY;
  if (options.access === 'write') {
    // A missing file is created exclusively (never through a link that appeared meanwhile), as a
    // regular file; an existing one is checked first, then truncated.
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        const handle = await open(
          path,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | base,
          0o666,
        );
        return await checked(handle, path, undefined);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      try {
        return anchored
          ? await reopenAnchored(path, constants.O_WRONLY | constants.O_TRUNC | base, false)
          : await openChecked(path, constants.O_WRONLY | base, false, true);
      } catch (error) {
        // Removed between the two opens: create it again.
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    }
    throw Object.assign(new Error(`${path} kept appearing and disappearing while it was written`), {
      code: 'EAGAIN',
    });
  }
  return anchored
    ? await reopenAnchored(path, constants.O_RDONLY | base, followLink)
    : await openChecked(path, constants.O_RDONLY | base, followLink, false);
}

/** Linux: `O_PATH` first, `fstat`, then the real open of that very inode through `/proc/self/fd`. */
async function reopenAnchored(path: string, flags: number, followLink: boolean): Promise<OpenedRegularFile> {
  const anchor = await open(path, O_PATH | (followLink ? 0 : constants.O_NOFOLLOW));
  try {
    const named = await anchor.stat();
    if (!named.isFile()) {
      throw new NotRegularFileError(
        path,
        describeFileType(named),
        followLink ? await linkTarget(path, anchor) : undefined,
      );
    }
    const handle = await open(`/proc/self/fd/${anchor.fd}`, flags);
    return await checked(handle, path, named);
  } finally {
    await anchor.close();
  }
}

/** Elsewhere: check by path, open non-blocking, then check the descriptor is what was checked. */
async function openChecked(
  path: string,
  flags: number,
  followLink: boolean,
  truncate: boolean,
): Promise<OpenedRegularFile> {
  const named = followLink ? await stat(path) : await lstat(path);
  if (!named.isFile()) throw new NotRegularFileError(path, describeFileType(named));
  const handle = await open(path, flags | (followLink ? 0 : constants.O_NOFOLLOW));
  const opened = await checked(handle, path, named);
  if (truncate) await opened.handle.truncate(0);
  return opened;
}

/** The opened descriptor must be a regular file (and the one named, when given); else closed and refused. */
async function checked(
  handle: FileHandle,
  path: string,
  named: Stats | undefined,
): Promise<OpenedRegularFile> {
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) throw new NotRegularFileError(path, describeFileType(stats));
    if (named && (stats.dev !== named.dev || stats.ino !== named.ino))
      throw Object.assign(new Error(`${path} was replaced while it was opened`), { code: 'EAGAIN' });
    return { handle, stats };
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** Where a followed path led (for the error text), when it was a link. */
async function linkTarget(path: string, anchor: FileHandle): Promise<string | undefined> {
  try {
    if (!(await lstat(path)).isSymbolicLink()) return undefined;
    return await readlink(`/proc/self/fd/${anchor.fd}`);
  } catch {
    return undefined;
  }
}

/**
 * Reads at most `cap` bytes from `handle`, from its current position, never trusting the size `stat`
 * reports (0 for `/proc` files, whatever it was when the file still grew): the buffer grows as data
 * comes, up to `cap + 1` bytes. Returns the data, or `undefined` when there was more than `cap` (the
 * file is larger, or grew while it was read).
 */
export async function readAtMost(handle: FileHandle, cap: number, sizeHint = 0): Promise<Buffer | undefined> {
  let buffer = Buffer.allocUnsafe(Math.min(cap + 1, Math.max(sizeHint + 1, 64 * 1024)));
  let length = 0;
  for (;;) {
    if (length === buffer.length) {
      if (length > cap) return undefined;
      const grown = Buffer.allocUnsafe(Math.min(cap + 1, buffer.length * 2));
      buffer.copy(grown, 0, 0, length);
      buffer = grown;
    }
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
    if (bytesRead === 0) break;
    length += bytesRead;
  }
  return length > cap ? undefined : buffer.subarray(0, length);
}
