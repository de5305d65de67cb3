import { constants, type MakeDirectoryOptions, type Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import { basename, dirname, isAbsolute, sep } from 'node:path';
import type { ApplyPatchFileSystem } from './apply-patch.js';
import { readRegularFile } from './read-text-file.js';

const DIRECTORY = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;

/**
 * The applier's file system for a writer that runs outside a sandbox on paths the sandbox can change
 * meanwhile (the door's `apply_patch`): every path is reached from `/` one directory at a time through
 * the descriptor of the one before (`/proc/self/fd/N/name`, opened `O_DIRECTORY|O_NOFOLLOW`), so a
 * directory swapped for a symbolic link between the policy check and the write makes the write fail
 * instead of landing where the link points. The last component is never followed either (files are
 * created `O_EXCL|O_NOFOLLOW`, read `O_NOFOLLOW`, renamed and unlinked as names). Paths must be
 * absolute and canonical (the ones the policy checked). Linux only (`/proc/self/fd`): elsewhere
 * `noFollowFileSystem()` returns undefined and the caller uses plain paths.
 */
export function noFollowFileSystem(): ApplyPatchFileSystem | undefined {
  if (process.platform !== 'linux') return undefined;
  return {
    readFile: (async (path: string) =>
      atParent(String(path), (at) => readRegularFile(at, { flags: constants.O_NOFOLLOW }))) as never,
    writeFile: (async (path: string, data: string | Uint8Array, options?: { mode?: number }) =>
      atParent(String(path), async (at) => {
        const handle = await fs.open(
          at,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
          options?.mode ?? 0o666,
        );
        try {
          await handle.writeFile(data);
        } finally {
          await handle.close();
        }
      })) as never,
    rename: (async (from: string, to: string) =>
      atParent(String(from), (a) => atParent(String(to), (b) => fs.rename(a, b)))) as never,
    unlink: (async (path: string) => atParent(String(path), (at) => fs.unlink(at))) as never,
    rmdir: (async (path: string) => atParent(String(path), (at) => fs.rmdir(at))) as never,
    lstat: (async (path: string) => atParent(String(path), (at) => fs.lstat(at))) as never,
    // What the applier asks `stat` for (a file's mode) it gets without following a link: a link is
    // no file to take a mode from.
    stat: (async (path: string) =>
      atParent(String(path), async (at) => {
        const stats: Stats = await fs.lstat(at);
        if (stats.isSymbolicLink())
          throw Object.assign(new Error(`${path} is a symbolic link`), { code: 'ELOOP' });
        return stats;
      })) as never,
    // Never resolves a link: the writer replaces a link that appeared after the check, in a directory
    // that was checked, instead of writing where it points.
    realpath: (async (path: string) => {
      throw Object.assign(new Error(`${path}: links are not followed`), { code: 'ELOOP' });
    }) as never,
    link: (async (from: string, to: string) =>
      atParent(String(from), (a) => atParent(String(to), (b) => fs.link(a, b)))) as never,
    copyFile: (async (from: string, to: string) => {
      const bytes = await atParent(String(from), (at) =>
        readRegularFile(at, { flags: constants.O_NOFOLLOW }),
      );
      await atParent(String(to), async (at) => {
        const handle = await fs.open(
          at,
          constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
          0o600,
        );
        try {
          await handle.writeFile(bytes);
        } finally {
          await handle.close();
        }
      });
    }) as never,
    chmod: (async (path: string, mode: number) =>
      atParent(String(path), async (at) => {
        const handle = await fs.open(at, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
        try {
          await handle.chmod(mode);
        } finally {
          await handle.close();
        }
      })) as never,
    mkdir: (async (path: string, options?: MakeDirectoryOptions) =>
      mkdirNoFollow(String(path), options)) as never,
  };
}

/**
 * Opens `path`'s parent directory through the chain of descriptors and calls `run` with a path that
 * names the last component inside it (`/proc/self/fd/N/name`); closes every descriptor afterwards.
 */
async function atParent<T>(path: string, run: (at: string) => Promise<T>): Promise<T> {
  const parent = await openDirectory(dirname(path));
  try {
    return await run(`/proc/self/fd/${parent.fd}/${basename(path)}`);
  } finally {
    await parent.close();
  }
}

/** Opens an absolute directory one component at a time, never following a link. */
async function openDirectory(path: string): Promise<fs.FileHandle> {
  if (!isAbsolute(path)) throw Object.assign(new Error(`${path} is not absolute`), { code: 'EINVAL' });
  let current = await fs.open('/', DIRECTORY);
  for (const part of path.split(sep).filter((name) => name !== '' && name !== '.')) {
    if (part === '..') {
      await current.close();
      throw Object.assign(new Error(`${path} is not canonical`), { code: 'EINVAL' });
    }
    try {
      const next = await fs.open(`/proc/self/fd/${current.fd}/${part}`, DIRECTORY);
      await current.close();
      current = next;
    } catch (error) {
      await current.close();
      throw error;
    }
  }
  return current;
}

/** `mkdir -p` through descriptors; returns the first directory it made, as `fs.mkdir` does. */
async function mkdirNoFollow(path: string, options?: MakeDirectoryOptions): Promise<string | undefined> {
  if (!options?.recursive) {
    await atParent(path, (at) => fs.mkdir(at));
    return undefined;
  }
  let current = await fs.open('/', DIRECTORY);
  let first: string | undefined;
  let walked = '';
  try {
    for (const part of path.split(sep).filter((name) => name !== '' && name !== '.')) {
      walked += `/${part}`;
      const at = `/proc/self/fd/${current.fd}/${part}`;
      try {
        await fs.mkdir(at, { mode: options.mode ?? 0o777 });
        first ??= walked;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const next = await fs.open(at, DIRECTORY);
      await current.close();
      current = next;
    }
  } finally {
    await current.close();
  }
  return first;
}
