import { randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import * as nodeFs from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import { ApplyPatchError } from './apply-patch-error.js';
import type { ParsedPatch } from './parse-patch.js';
import { describeIoError, type PatchPlan, planPatch } from './plan-patch.js';
import { readTextFile } from './read-text-file.js';
import { type PatchSummary, summarizePatch } from './summarize-patch.js';

/** The file system calls the applier uses; `node:fs/promises` by default, replaceable in tests. */
export type ApplyPatchFileSystem = Pick<
  typeof nodeFs,
  | 'readFile'
  | 'writeFile'
  | 'rename'
  | 'unlink'
  | 'mkdir'
  | 'rmdir'
  | 'stat'
  | 'lstat'
  | 'realpath'
  | 'link'
  | 'copyFile'
  | 'chmod'
>;

export interface ApplyPatchOptions {
  /** Absolute directory that relative patch paths are resolved against. */
  cwd: string;
  fs?: ApplyPatchFileSystem;
}

/**
 * Plans the patch and applies it: every file changes, or none does. Returns the change summary;
 * throws an `ApplyPatchError` (parse, context or I/O) after restoring anything it had touched.
 */
export async function applyPatch(
  patch: string | ParsedPatch,
  options: ApplyPatchOptions,
): Promise<PatchSummary> {
  const fs = options.fs ?? nodeFs;
  const plan = await planPatch(patch, {
    cwd: options.cwd,
    readFile: (path) => readTextFile(path, (p) => fs.readFile(p)),
  });
  return applyPlan(plan, { fs });
}

interface Staged {
  target: string;
  temp: string;
  backup?: string;
  committed: boolean;
}

interface Removed {
  path: string;
  backup: string;
}

/**
 * Writes a plan computed by `planPatch` (after the caller checked `touchedPaths`). Each new file goes
 * to a temporary file beside its target first; only when all are written are they renamed over their
 * targets, and only then are deleted files removed. Replaced and removed files are kept as hard links
 * (or copies) until the end, so a failure at any step restores every file and removes created
 * directories. A symlink target is written through, so the link stays a link.
 */
export async function applyPlan(
  plan: PatchPlan,
  options: { fs?: ApplyPatchFileSystem } = {},
): Promise<PatchSummary> {
  const fs = options.fs ?? nodeFs;
  const staged: Staged[] = [];
  const removed: Removed[] = [];
  const createdDirs: string[] = [];
  let failedPath: string | undefined;
  let action = 'write';

  try {
    for (const write of plan.writes) {
      failedPath = write.path;
      action = 'write';
      const target = await writeTarget(fs, write.path);
      const created = await fs.mkdir(dirname(target), { recursive: true });
      if (created !== undefined) createdDirs.push(...dirsBetween(created, dirname(target)));
      const mode =
        (await fileMode(fs, target)) ?? (write.modeFrom ? await fileMode(fs, write.modeFrom) : undefined);
      const temp = sidecar(target, 'tmp');
      const entry: Staged = { target, temp, committed: false };
      staged.push(entry);
      await fs.writeFile(temp, write.contents, { flag: 'wx', ...(mode === undefined ? {} : { mode }) });
      if (mode !== undefined) await fs.chmod(temp, mode);
    }

    for (const entry of staged) {
      failedPath = entry.target;
      action = 'write';
      if (await exists(fs, entry.target)) {
        const backup = sidecar(entry.target, 'bak');
        await keepCopy(fs, entry.target, backup);
        entry.backup = backup;
      }
      await fs.rename(entry.temp, entry.target);
      entry.committed = true;
    }

    for (const path of plan.removals) {
      failedPath = path;
      action = 'delete';
      if (!(await exists(fs, path))) continue;
      const backup = sidecar(path, 'bak');
      await fs.rename(path, backup);
      removed.push({ path, backup });
    }
  } catch (error) {
    await rollback(fs, staged, removed, createdDirs);
    const path = failedPath === undefined ? '' : relative(plan.cwd, failedPath) || failedPath;
    throw new ApplyPatchError(
      {
        reason: 'io',
        detail: `Failed to ${action} file ${path}: ${describeIoError(error)}; no file was changed`,
        path,
      },
      { cause: error },
    );
  }

  // Committed: the kept copies are no longer needed.
  for (const entry of staged) if (entry.backup) await ignoreFailure(fs.unlink(entry.backup));
  for (const entry of removed) await ignoreFailure(fs.unlink(entry.backup));
  return summarizePatch(plan);
}

async function rollback(
  fs: ApplyPatchFileSystem,
  staged: Staged[],
  removed: Removed[],
  createdDirs: string[],
): Promise<void> {
  for (const entry of removed.reverse()) await ignoreFailure(fs.rename(entry.backup, entry.path));
  for (const entry of [...staged].reverse()) {
    if (entry.committed) {
      if (entry.backup) await ignoreFailure(fs.rename(entry.backup, entry.target));
      else await ignoreFailure(fs.unlink(entry.target));
    } else {
      await ignoreFailure(fs.unlink(entry.temp));
      if (entry.backup) await ignoreFailure(fs.unlink(entry.backup));
    }
  }
  // Deepest first; rmdir only removes empty directories, so nothing else is lost.
  const dirs = [...new Set(createdDirs)].sort((a, b) => b.length - a.length);
  for (const dir of dirs) await ignoreFailure(fs.rmdir(dir));
}

/** Where to write `path`: through a symlink to the file it points at, else the path itself. */
async function writeTarget(fs: ApplyPatchFileSystem, path: string): Promise<string> {
  const stats = await fs.lstat(path).catch(() => undefined);
  if (!stats?.isSymbolicLink()) return path;
  return fs.realpath(path).catch(() => path);
}

async function fileMode(fs: ApplyPatchFileSystem, path: string): Promise<number | undefined> {
  const stats = await fs.stat(path).catch(() => undefined);
  return stats?.isFile() ? stats.mode & 0o7777 : undefined;
}

async function exists(fs: ApplyPatchFileSystem, path: string): Promise<boolean> {
  return (await fs.lstat(path).catch(() => undefined)) !== undefined;
}

/** Keeps the current file under `backup` without copying when a hard link is possible. */
async function keepCopy(fs: ApplyPatchFileSystem, path: string, backup: string): Promise<void> {
  try {
    await fs.link(path, backup);
  } catch {
    await fs.copyFile(path, backup, constants.COPYFILE_EXCL);
  }
}

/** A hidden name beside `path`, in the same directory so that rename stays on one file system. */
function sidecar(path: string, kind: 'tmp' | 'bak'): string {
  return join(dirname(path), `.${basename(path)}.${randomBytes(6).toString('hex')}.ux-patch-${kind}`);
}

/** `first` (the first directory mkdir created) and each of its descendants down to `last`. */
function dirsBetween(first: string, last: string): string[] {
  const dirs: string[] = [];
  for (let dir = last; dir.length >= first.length; dir = dirname(dir)) {
    dirs.push(dir);
    if (dir === first || dirname(dir) === dir) break;
  }
  return dirs;
}

async function ignoreFailure(promise: Promise<unknown>): Promise<void> {
  await promise.catch(() => undefined);
}
