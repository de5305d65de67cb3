import { resolve } from 'node:path';
import { ApplyPatchError } from './apply-patch-error.js';
import { type ParsedPatch, parsePatch } from './parse-patch.js';
import { readTextFile } from './read-text-file.js';
import { splitLines, updateFileContents } from './update-file-contents.js';

export type PatchChangeKind = 'add' | 'update' | 'delete';

/** What one file operation of the patch will do, with absolute paths. */
export interface PlannedChange {
  kind: PatchChangeKind;
  /** Absolute path of the file added, updated or deleted (the source of a move). */
  path: string;
  /** Absolute destination of `*** Move to:`. */
  movedTo?: string;
  /** Contents before the change (undefined for an add). */
  oldContents?: string;
  /** Contents after the change (undefined for a delete). */
  newContents?: string;
  /** Lines the patch adds and removes. */
  added: number;
  removed: number;
}

/** A file the applier writes: its final contents once every operation has run. */
export interface PlannedWrite {
  path: string;
  contents: string;
  /** For a move destination: the file whose permissions the new file keeps. */
  modeFrom?: string;
}

/** Everything a patch will do, resolved against the file system but not written. */
export interface PatchPlan {
  cwd: string;
  /** One entry per file operation, in patch order. */
  changes: PlannedChange[];
  /** Final contents per written path (a path touched twice appears once, with its last contents). */
  writes: PlannedWrite[];
  /** Paths removed (deletes and move sources), removed after every write succeeded. */
  removals: string[];
}

export interface PlanPatchOptions {
  /** Absolute directory that relative patch paths are resolved against. */
  cwd: string;
  /** Reads a file as text; defaults to the disk, refusing files that are not UTF-8. */
  readFile?: (absolutePath: string) => Promise<string> | string;
}

/**
 * Resolves a patch into the changes it makes, without writing anything: reads each file, finds every
 * hunk, computes new contents. Operations run in order on a virtual view, so a later operation sees
 * what an earlier one did. Throws an `ApplyPatchError` naming the file and what was not found.
 */
export async function planPatch(patch: string | ParsedPatch, options: PlanPatchOptions): Promise<PatchPlan> {
  const parsed = typeof patch === 'string' ? parsePatch(patch) : patch;
  const { cwd } = options;
  const read = options.readFile ?? ((path: string) => readTextFile(path));
  if (parsed.operations.length === 0) {
    throw new ApplyPatchError({ reason: 'empty_patch', detail: 'No files were modified.' });
  }

  // null: removed by an earlier operation of this patch.
  const view = new Map<string, string | null>();
  const modeFrom = new Map<string, string>();
  const readCurrent = async (path: string): Promise<string> => {
    const known = view.get(path);
    if (known === null)
      throw Object.assign(new Error(`${path} was removed earlier in this patch`), { code: 'ENOENT' });
    return known ?? (await read(path));
  };

  const changes: PlannedChange[] = [];
  for (const operation of parsed.operations) {
    const path = resolve(cwd, operation.path);
    if (operation.kind === 'add') {
      view.set(path, operation.contents);
      modeFrom.delete(path);
      changes.push({
        kind: 'add',
        path,
        newContents: operation.contents,
        added: splitLines(operation.contents).length,
        removed: 0,
      });
    } else if (operation.kind === 'delete') {
      const oldContents = await readCurrent(path).catch((error: unknown) => {
        // A binary file can still be deleted; only its line count is unknown.
        if (errorCode(error) === 'ENOTUTF8') return '';
        throw ioError(`Failed to delete file ${operation.path}`, operation.path, operation.line, error);
      });
      view.set(path, null);
      changes.push({ kind: 'delete', path, oldContents, added: 0, removed: splitLines(oldContents).length });
    } else {
      const oldContents = await readCurrent(path).catch((error: unknown) => {
        throw ioError(
          `Failed to read file to update ${operation.path}`,
          operation.path,
          operation.line,
          error,
        );
      });
      const newContents = updateFileContents(oldContents, operation.hunks, operation.path);
      const added = operation.hunks.reduce((sum, hunk) => sum + hunk.added, 0);
      const removed = operation.hunks.reduce((sum, hunk) => sum + hunk.removed, 0);
      const target = operation.moveTo === undefined ? path : resolve(cwd, operation.moveTo);
      if (target === path) {
        view.set(path, newContents);
        changes.push({ kind: 'update', path, oldContents, newContents, added, removed });
      } else {
        view.set(target, newContents);
        view.set(path, null);
        modeFrom.set(target, modeFrom.get(path) ?? path);
        changes.push({ kind: 'update', path, movedTo: target, oldContents, newContents, added, removed });
      }
    }
  }

  const writes: PlannedWrite[] = [];
  const removals: string[] = [];
  for (const [path, contents] of view) {
    if (contents === null) removals.push(path);
    else {
      const source = modeFrom.get(path);
      writes.push(source === undefined ? { path, contents } : { path, contents, modeFrom: source });
    }
  }
  return { cwd, changes, writes, removals };
}

function ioError(prefix: string, path: string, line: number, cause: unknown): ApplyPatchError {
  if (ApplyPatchError.isInstance(cause)) return cause;
  return new ApplyPatchError(
    { reason: 'io', detail: `${prefix}: ${describeIoError(cause)}`, path, line },
    { cause },
  );
}

const IO_TEXT: Record<string, string> = {
  ENOENT: 'No such file or directory',
  EISDIR: 'Is a directory',
  ENOTDIR: 'Not a directory',
  EACCES: 'Permission denied',
  EPERM: 'Operation not permitted',
  EROFS: 'Read-only file system',
  ENOSPC: 'No space left on device',
  EEXIST: 'File exists',
  ENOTUTF8: 'the file is not valid UTF-8 text',
};

/** A short, stable description of a file system error (`No such file or directory`). */
export function describeIoError(error: unknown): string {
  const code = errorCode(error);
  if (code !== undefined && IO_TEXT[code] !== undefined) return IO_TEXT[code];
  return error instanceof Error ? error.message : String(error);
}

function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
