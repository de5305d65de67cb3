import { constants } from 'node:fs';
import { type FileHandle, lstat, open, readdir, rm, rmdir, unlink } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { canAnchorOnDescriptors } from './open-regular-file.js';

const O_PATH = 0o10000000;

/** How deep `removePath` descends (one open descriptor per level); deeper trees are refused. */
export const REMOVE_MAX_DEPTH = 256;

export interface RemovePathOptions {
  /** Remove a directory with everything in it (else a directory is refused with `EISDIR`). */
  recursive: boolean;
  /** Tests: force the portable path-based way (what runs where `/proc/self/fd` is missing). */
  anchorOnDescriptors?: boolean;
  /** Tests: called with each directory's path once it is open, before it is listed (a swap goes here). */
  beforeListing?: (path: string) => void;
}

/**
 * Removes `path` without ever following a symbolic link: a link is removed itself, never what it points
 * to, wherever it lies in the tree. A missing path is not an error.
 *
 * On Linux every step goes through a descriptor of the directory that holds the entry
 * (`/proc/self/fd/N/NAME`, the `unlinkat`/`rmdirat` of a runtime without them): the directory is
 * opened `O_NOFOLLOW | O_DIRECTORY`, listed through its descriptor, and each entry is removed inside it.
 * A sandboxed command that swaps a subdirectory for a link to a directory it cannot write while the
 * removal runs gets its link removed, nothing else: no step re-walks a path. The directories above
 * `path` are resolved as usual (they are part of the path the caller named). Elsewhere, Node's own
 * recursive removal (`lstat`-based, it does not descend into links, but it walks paths).
 */
export async function removePath(path: string, options: RemovePathOptions): Promise<void> {
  const name = basename(path);
  if (name === '' || name === '.' || name === '..') {
    throw Object.assign(new Error(`refusing to remove ${JSON.stringify(path)}: name the entry itself`), {
      code: 'EINVAL',
      path,
    });
  }
  const anchored = options.anchorOnDescriptors ?? canAnchorOnDescriptors();
  if (!anchored) {
    await rm(path, { recursive: options.recursive, force: true });
    return;
  }
  let parent: FileHandle;
  try {
    parent = await open(dirname(path), O_PATH | constants.O_DIRECTORY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    await removeEntry(parent, name, path, options, 0);
  } finally {
    await parent.close();
  }
}

/** Removes `name` inside the directory `parent` (a descriptor): a file or link at once, a directory's entries first. */
async function removeEntry(
  parent: FileHandle,
  name: string,
  shown: string,
  options: RemovePathOptions,
  depth: number,
): Promise<void> {
  const at = `/proc/self/fd/${parent.fd}/${name}`;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    let info: Awaited<ReturnType<typeof lstat>>;
    try {
      info = await lstat(at);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw withPath(error, shown);
    }
    if (!info.isDirectory()) {
      try {
        await unlink(at);
        return;
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code === 'ENOENT') return;
        // Replaced by a directory meanwhile: look again.
        if (code === 'EISDIR' || code === 'EPERM') continue;
        throw withPath(error, shown);
      }
    }
    if (!options.recursive) {
      throw Object.assign(new Error(`Path is a directory: ${shown}`), { code: 'EISDIR', path: shown });
    }
    if (depth >= REMOVE_MAX_DEPTH) {
      throw Object.assign(
        new Error(`${shown} lies more than ${REMOVE_MAX_DEPTH} directories deep; nothing below was removed`),
        { code: 'ELOOP', path: shown },
      );
    }
    let dir: FileHandle;
    try {
      dir = await open(at, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      // Swapped for a link or a file since the lstat: removed as what it is now.
      if (code === 'ENOTDIR' || code === 'ELOOP') continue;
      throw withPath(error, shown);
    }
    try {
      options.beforeListing?.(shown);
      // Listed through the descriptor: the directory that was opened, whatever its path holds now.
      for (const entry of await readdir(`/proc/self/fd/${dir.fd}`)) {
        await removeEntry(dir, entry, `${shown}/${entry}`, options, depth + 1);
      }
    } finally {
      await dir.close();
    }
    try {
      await rmdir(at);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      // Swapped for a link or a file, or refilled, since it was emptied: once more.
      if (code === 'ENOTDIR' || code === 'ENOTEMPTY' || code === 'EEXIST') continue;
      throw withPath(error, shown);
    }
  }
  throw Object.assign(new Error(`${shown} kept changing while it was removed`), {
    code: 'EAGAIN',
    path: shown,
  });
}

/** The system error with the path the caller knows (not `/proc/self/fd/N/…`) in its message. */
function withPath(error: unknown, shown: string): Error {
  const cause = error as NodeJS.ErrnoException;
  return Object.assign(new Error(`${cause.message.split(',')[0]}, '${shown}'`), {
    code: cause.code,
    path: shown,
    cause,
  });
}
