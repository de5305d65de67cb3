import { type Dirent, readdirSync } from 'node:fs';
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
 * The git repositories inside some directories (nested repositories, vendored checkouts, submodules,
 * linked worktrees): breadth-first, symbolic links never followed, bounded by a directory budget so a
 * huge tree costs a known amount (bench/repositories). A repository's own `.git` is not entered; its
 * work tree is (a submodule's checkout is a work tree with a `.git` file).
 */
export function findRepositories(
  roots: readonly string[],
  options: FindRepositoriesOptions = {},
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
      let entries: Dirent[];
      try {
        entries = readdirSync(path, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        if (entry.name === '.git') {
          found.add(path);
          continue;
        }
        if (!entry.isDirectory() || skip.has(entry.name)) continue;
        if (depth + 1 > maxDepth) {
          truncated = true;
          continue;
        }
        next.push({ path: join(path, entry.name), depth: depth + 1 });
      }
    }
    if (truncated && directories >= budget) break;
    level = next;
  }
  return { repositories: [...found].sort(), directories, truncated };
}
