import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  lstatSync,
  openSync,
  readSync,
  realpathSync,
} from 'node:fs';
import { posix } from 'node:path';
import type { EffectivePolicy } from '@ux/protocol/core';
import {
  createRepositoryScanCache,
  type FindRepositoriesOptions,
  findRepositories,
  isUnder,
  type SandboxLayout,
} from '@ux/protocol-utils';
import type { RepositoryToCheck } from './path-guard.js';

/**
 * File-system timestamps come from a coarse clock (a tick behind the one `Date.now()` reads): a file
 * made just after a moment can carry a time just before it.
 */
export const TIMESTAMP_SLACK_MS = 50;
/** How many repositories a backend remembers (the oldest are forgotten first). */
export const REMEMBERED_REPOSITORIES_MAX = 1000;

/** The surface whose change during a command makes an unprotected repository worth a check. */
const SURFACE = ['config', 'hooks', 'commondir', 'config.worktree', 'info/attributes'];
/** Protected entries that make their directory a git directory the plan already protected. */
const PROTECTED_NAMES = new Set(['config', 'hooks', 'commondir']);

export interface RepositoryScan {
  /** Git directories to check (the guard's `C` records). */
  checks: RepositoryToCheck[];
  /** Work trees of the repositories found new (checked, or pointing outside every writable root). */
  workTrees: string[];
  /** Directories the scan read, and whether its budget ran out first (`findRepositories`). */
  directories: number;
  truncated: boolean;
}

/**
 * The repositories sandboxed commands of one backend created, found after each command and
 * remembered, so that later plans protect them like the repositories found when the session started.
 */
export interface CreatedRepositories {
  /** `policy` with the remembered repositories added to its `knownRepositories`. */
  policyFor(policy: EffectivePolicy): EffectivePolicy;
  /**
   * After a command whose sandbox has ended: the repositories below its writable roots (except the
   * roots themselves, whose `.git` the guard watches) that were created since the backend started
   * (birth time, or change time where the file system keeps no birth time), or whose configuration
   * surface changed since `plannedAt`, and that the plan did not already protect (`policy`, the
   * one the command was planned with: its `knownRepositories`, the remembered ones among them).
   */
  scan(layout: SandboxLayout, policy: EffectivePolicy, plannedAt: number): RepositoryScan;
  remember(workTrees: readonly string[]): void;
  /** The remembered work trees, oldest first. */
  readonly known: readonly string[];
}

export interface CreatedRepositoriesOptions {
  /** When the backend started (host clock, ms). */
  startedAt: number;
  /** Bounds of the scan (`findRepositories`' defaults otherwise). */
  scan?: FindRepositoriesOptions;
}

export function trackCreatedRepositories(options: CreatedRepositoriesOptions): CreatedRepositories {
  const remembered = new Set<string>();
  // The search runs after every command: a directory whose change time has not moved is not read again.
  const cache = createRepositoryScanCache();

  return {
    get known() {
      return [...remembered];
    },

    policyFor(policy) {
      if (remembered.size === 0) return policy;
      return { ...policy, knownRepositories: [...(policy.knownRepositories ?? []), ...remembered] };
    },

    remember(workTrees) {
      for (const workTree of workTrees) {
        remembered.delete(workTree);
        remembered.add(workTree);
      }
      for (const oldest of remembered) {
        if (remembered.size <= REMEMBERED_REPOSITORIES_MAX) break;
        remembered.delete(oldest);
      }
    },

    scan(layout, policy, plannedAt) {
      // A whole-disk writable root is not scanned: nothing about it is sandboxed for files.
      const roots = layout.writableRoots.map(({ root }) => root).filter((root) => root !== '/');
      const result: RepositoryScan = { checks: [], workTrees: [], directories: 0, truncated: false };
      if (roots.length === 0) return result;
      const found = findRepositories(roots, options.scan, cache);
      result.directories = found.directories;
      result.truncated = found.truncated;
      // What this command's plan protected: its roots and `knownRepositories` (the remembered ones it
      // was planned with among them). One remembered since then was writable to this command: looked at.
      const protectedAlready = new Set<string>(roots);
      for (const known of policy.knownRepositories ?? []) protectedAlready.add(canonical(known));
      // Git directories whose surface the plan bound read-only (or guarded): never "checked" against
      // git's own keys, whatever points at them (a new `sub/.git` file saying `gitdir: ../.git` must
      // not make the host rewrite the workspace's own config).
      const protectedGitDirs = new Set<string>();
      for (const { readOnly } of layout.writableRoots)
        for (const { path } of readOnly)
          if (PROTECTED_NAMES.has(posix.basename(path))) protectedGitDirs.add(posix.dirname(path));
      // Made during the session (its birth time; its change time where the file system keeps none), or
      // a git directory whose surface changed during this command.
      const bornSinceStart = (path: string) => {
        const stat = lstatOrUndefined(path);
        if (!stat) return false;
        return (
          (stat.birthtimeMs > 0 ? stat.birthtimeMs : stat.ctimeMs) >= options.startedAt - TIMESTAMP_SLACK_MS
        );
      };
      const surfaceChanged = (gitDir: string) =>
        SURFACE.some(
          (name) =>
            (lstatOrUndefined(posix.join(gitDir, name))?.ctimeMs ?? 0) >= plannedAt - TIMESTAMP_SLACK_MS,
        );
      const fresh = (gitDir: string) => bornSinceStart(gitDir) || surfaceChanged(gitDir);
      for (const workTree of found.repositories) {
        if (protectedAlready.has(workTree)) continue;
        const git = posix.join(workTree, '.git');
        const stat = lstatOrUndefined(git);
        if (!stat || !(stat.isDirectory() ? fresh(git) : bornSinceStart(git))) continue;
        const gitDir = stat.isDirectory()
          ? git
          : stat.isFile()
            ? pointerTarget(git)
            : stat.isSymbolicLink()
              ? realpathOrUndefined(git)
              : undefined;
        if (gitDir === undefined) continue; // not a repository git would use
        result.workTrees.push(workTree);
        const check = (dir: string, linkedWorktree: boolean) => {
          // Never one the plan protected; one a new pointer names only if it is new or changed itself.
          if (protectedGitDirs.has(dir) || (dir !== git && !fresh(dir))) return;
          // Only what a command could have written needs a check: a git directory below a writable root.
          const root = [...roots].reverse().find((candidate) => dir !== candidate && isUnder(dir, candidate));
          if (root)
            result.checks.push({
              root,
              gitDir: posix.relative(root, dir),
              workTree,
              ...(linkedWorktree ? { linkedWorktree: true } : {}),
            });
        };
        if (lstatOrUndefined(posix.join(gitDir, 'commondir'))?.isFile()) {
          // A linked worktree's git directory: its pointers are checked there, and the configuration
          // it uses in the repository it shares (git writes `../..`: two levels up; the guard refuses
          // any other commondir, so that is the one git would read).
          check(gitDir, true);
          const common = realpathOrUndefined(posix.join(gitDir, '..', '..'));
          if (common) check(common, false);
        } else {
          check(gitDir, false);
        }
      }
      return result;
    },
  };
}

/**
 * Where git's own templates are (the hooks a new repository starts with): `GIT_TEMPLATE_DIR` when it
 * names a directory, else the first of the usual install places that exists.
 */
export function findGitTemplateDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = [
    env.GIT_TEMPLATE_DIR,
    '/usr/share/git-core/templates',
    '/usr/local/share/git-core/templates',
    '/run/current-system/sw/share/git-core/templates',
  ];
  return candidates.find(
    (dir) =>
      dir?.startsWith('/') && existsSync(posix.join(dir, 'hooks')) && lstatOrUndefined(dir)?.isDirectory(),
  );
}

function lstatOrUndefined(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function realpathOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

function canonical(path: string): string {
  return realpathOrUndefined(path) ?? path;
}

/**
 * The git directory a `.git` file points to (`gitdir: <path>`, relative to the file), resolved as git
 * resolves it (links followed), when it is a directory. The file is opened without blocking and read
 * only if it is a regular file, at most 4 KiB: a command may have made it a FIFO.
 */
function pointerTarget(gitFile: string): string | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(gitFile, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
    if (!fstatSync(fd).isFile()) return undefined;
    const buffer = Buffer.alloc(4096);
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    const match = /^gitdir:\s*(.+?)\s*$/m.exec(buffer.subarray(0, length).toString('utf8'));
    if (!match) return undefined;
    const target = realpathOrUndefined(posix.resolve(posix.dirname(gitFile), match[1]!));
    return target && lstatOrUndefined(target)?.isDirectory() ? target : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}
