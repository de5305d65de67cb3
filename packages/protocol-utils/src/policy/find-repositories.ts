import { type Dirent, lstatSync, readdirSync, type Stats } from 'node:fs';
import { join } from 'node:path';

export interface FindRepositoriesOptions {
  /** At most this many directories are read, over all roots (default 20 000). */
  maxDirectories?: number;
  /** Directory names never entered (default `node_modules`: package managers strip `.git` there). */
  skip?: readonly string[];
  /** How deep below each root (default 12 levels). */
  maxDepth?: number;
}

export interface FoundRepositories {
  /** Work trees holding a `.git` (directory, pointer file or link), below or at the roots. */
  repositories: string[];
  /** Directories read. */
  directories: number;
  /** The budget ran out (or the depth was reached) before every directory was read. */
  truncated: boolean;
}

export const FIND_REPOSITORIES_MAX_DIRECTORIES = 20_000;

/**
 * What a directory held when it was last read, for scans that repeat (one after every command): the
 * directory is read again only when its change time moved. The change time, not the modification time:
 * a sandboxed command can set a directory's mtime back (`touch -d`), never its ctime. A directory
 * changed within the last second is always read again, since two changes in one tick of the file
 * system's clock leave one time.
 */
export interface RepositoryScanCache {
  entries: Map<string, { dev: number; ino: number; ctimeMs: number; git: boolean; subdirs: string[] }>;
}

export function createRepositoryScanCache(): RepositoryScanCache {
  return { entries: new Map() };
}

const RECENT_MS = 1000;

/**
 * The git repositories inside some directories (nested repositories, vendored checkouts, submodules,
 * linked worktrees): breadth-first, symbolic links never followed, bounded by a directory budget so a
 * huge tree costs a known amount (bench/repositories). A repository's own `.git` is not entered; its
 * work tree is (a submodule's checkout is a work tree with a `.git` file). With a `cache` (one per
 * scanner that repeats), a directory whose change time has not moved is not read again.
 */
export function findRepositories(
  roots: readonly string[],
  options: FindRepositoriesOptions = {},
  cache?: RepositoryScanCache,
): FoundRepositories {
  const budget = options.maxDirectories ?? FIND_REPOSITORIES_MAX_DIRECTORIES;
  const skip = new Set(options.skip ?? ['node_modules']);
  const maxDepth = options.maxDepth ?? 12;
  const found = new Set<string>();
  const seen = new Set<string>();
  let directories = 0;
  let truncated = false;
  let level = roots.map((root) => ({ path: root, depth: 0 }));
  while (level.length > 0) {
    const next: { path: string; depth: number }[] = [];
    for (const { path, depth } of level) {
      if (seen.has(path)) continue;
      seen.add(path);
      if (directories >= budget) {
        truncated = true;
        break;
      }
      directories += 1;
      const listed = list(path, skip, cache);
      if (!listed) continue;
      if (listed.git) found.add(path);
      for (const name of listed.subdirs) {
        if (depth + 1 > maxDepth) {
          truncated = true;
          continue;
        }
        next.push({ path: join(path, name), depth: depth + 1 });
      }
    }
    if (truncated && directories >= budget) break;
    level = next;
  }
  return { repositories: [...found].sort(), directories, truncated };
}

/** Whether a directory holds `.git`, and its subdirectories (links not followed, `skip` left out). */
function list(
  path: string,
  skip: ReadonlySet<string>,
  cache: RepositoryScanCache | undefined,
): { git: boolean; subdirs: string[] } | undefined {
  let stat: Stats | undefined;
  if (cache) {
    try {
      stat = lstatSync(path);
    } catch {
      cache.entries.delete(path);
      return undefined;
    }
    if (!stat.isDirectory()) return undefined;
    const known = cache.entries.get(path);
    const settled = Date.now() - stat.ctimeMs > RECENT_MS;
    if (
      known &&
      settled &&
      known.dev === stat.dev &&
      known.ino === stat.ino &&
      known.ctimeMs === stat.ctimeMs
    )
      return known;
  }
  let entries: Dirent[];
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch {
    cache?.entries.delete(path);
    return undefined;
  }
  const listed = { git: false, subdirs: [] as string[] };
  for (const entry of entries) {
    if (entry.name === '.git') listed.git = true;
    else if (entry.isDirectory() && !skip.has(entry.name)) listed.subdirs.push(entry.name);
  }
  if (cache && stat)
    cache.entries.set(path, { dev: stat.dev, ino: stat.ino, ctimeMs: stat.ctimeMs, ...listed });
  return listed;
}
