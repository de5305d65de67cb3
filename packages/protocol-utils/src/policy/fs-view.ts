import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
} from 'node:fs';

/** What a planner may ask of the file system. Injected, so planners for other platforms run anywhere. */
export interface FsView {
  /** The kind of entry at `path` (without following a final symlink), or undefined when absent. */
  kind(path: string): 'file' | 'dir' | 'symlink' | 'other' | undefined;
  /** A file's text, or undefined when it cannot be read. */
  readFile(path: string): string | undefined;
  /** Entry names in a directory (empty when it cannot be read). */
  readdir(path: string): string[];
  /** The canonical path of an existing entry (symlinks resolved), or undefined. */
  realpath(path: string): string | undefined;
  /**
   * The text of the symbolic link at `path` (not followed), or undefined when it is not one. Optional:
   * a planner without it falls back on `realpath` (and cannot see a dangling link's target).
   */
  readlink?(path: string): string | undefined;
}

/** The real file system through node:fs. */
export function nodeFsView(): FsView {
  return {
    kind(path) {
      try {
        // Most paths a planner asks about are missing: no exception for those (they cost ~10 µs each).
        const stat = lstatSync(path, { throwIfNoEntry: false });
        if (stat === undefined) return undefined;
        if (stat.isSymbolicLink()) return 'symlink';
        if (stat.isDirectory()) return 'dir';
        if (stat.isFile()) return 'file';
        return 'other';
      } catch {
        return undefined;
      }
    },
    readFile(path) {
      return readSmallRegularFile(path);
    },
    readdir(path) {
      try {
        return readdirSync(path);
      } catch {
        return [];
      }
    },
    realpath(path) {
      try {
        return realpathSync(path);
      } catch {
        return undefined;
      }
    },
    readlink(path) {
      try {
        return readlinkSync(path);
      } catch {
        return undefined;
      }
    },
  };
}

/** Largest file `nodeFsView().readFile` returns (git pointers, `commondir`, configuration files). */
export const FS_VIEW_MAX_READ_BYTES = 4 * 1024 * 1024;

/**
 * A regular file's text, opened without blocking and checked on the opened descriptor: planners read
 * files a sandboxed command may have made (a new repository's `config`), and a FIFO there would block
 * the host forever, a link to `/dev/zero` fill its memory. Anything else, or anything larger than
 * `FS_VIEW_MAX_READ_BYTES`, reads as undefined.
 */
function readSmallRegularFile(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return undefined;
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile() || stat.size > FS_VIEW_MAX_READ_BYTES) return undefined;
    const buffer = Buffer.allocUnsafe(FS_VIEW_MAX_READ_BYTES + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > FS_VIEW_MAX_READ_BYTES) return undefined;
    }
    return buffer.toString('utf8', 0, length);
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** An in-memory file system for planner tests: paths ending in `/` are directories, `->` marks symlinks. */
export function memoryFsView(entries: Record<string, string>): FsView {
  const files = new Map<string, string>();
  const dirs = new Set<string>(['/']);
  const links = new Map<string, string>();
  const addParents = (path: string) => {
    for (
      let parent = path.slice(0, path.lastIndexOf('/'));
      parent !== '';
      parent = parent.slice(0, parent.lastIndexOf('/'))
    ) {
      dirs.add(parent);
    }
  };
  for (const [path, content] of Object.entries(entries)) {
    if (path.endsWith('/')) {
      dirs.add(path.slice(0, -1));
      addParents(path.slice(0, -1));
    } else if (content.startsWith('-> ')) {
      links.set(path, content.slice(3));
      addParents(path);
    } else {
      files.set(path, content);
      addParents(path);
    }
  }
  const resolve = (path: string, depth = 0): string | undefined => {
    if (depth > 16) return undefined;
    const parts = path.split('/').filter(Boolean);
    let current = '';
    for (let i = 0; i < parts.length; i++) {
      current = `${current}/${parts[i]}`;
      const target = links.get(current);
      if (target !== undefined) {
        const rest = parts.slice(i + 1).join('/');
        const base = target.startsWith('/')
          ? target
          : `${current.slice(0, current.lastIndexOf('/'))}/${target}`;
        return resolve(rest ? `${base}/${rest}` : base, depth + 1);
      }
    }
    const normal = current || '/';
    return files.has(normal) || dirs.has(normal) ? normal : undefined;
  };
  return {
    // Like lstat: links on the way are followed, the last name is not.
    kind: (path) => {
      if (path === '/') return 'dir';
      const slash = path.lastIndexOf('/');
      const parent = slash <= 0 ? '/' : resolve(path.slice(0, slash));
      if (parent === undefined) return undefined;
      const at = `${parent === '/' ? '' : parent}/${path.slice(slash + 1)}`;
      return links.has(at) ? 'symlink' : dirs.has(at) ? 'dir' : files.has(at) ? 'file' : undefined;
    },
    readFile: (path) => {
      const real = resolve(path);
      return real === undefined ? undefined : files.get(real);
    },
    readdir: (path) => {
      const prefix = path === '/' ? '/' : `${path}/`;
      const names = new Set<string>();
      for (const entry of [...files.keys(), ...dirs, ...links.keys()]) {
        if (entry.startsWith(prefix) && entry !== path) names.add(entry.slice(prefix.length).split('/')[0]!);
      }
      return [...names].sort();
    },
    realpath: (path) => resolve(path),
    readlink: (path) => links.get(path),
  };
}
