import { statSync } from 'node:fs';
import type { ShellSnapshot } from './capture-shell-snapshot.js';

/** Each path with its modification time now (`null` when it does not exist or cannot be read). */
export function stampLoginFiles(paths: readonly string[]): { path: string; mtimeMs: number | null }[] {
  return paths.map((path) => ({ path, mtimeMs: mtimeOf(path) }));
}

/**
 * Whether the snapshot can still be used: its file exists and every login file still has the mtime it
 * had at capture (one stat per file; a file created or removed since counts as a change).
 */
export function isShellSnapshotFresh(snapshot: ShellSnapshot): boolean {
  if (mtimeOf(snapshot.file) === null) return false;
  return snapshot.loginFiles.every(({ path, mtimeMs }) => mtimeOf(path) === mtimeMs);
}

function mtimeOf(path: string): number | null {
  try {
    return statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? null;
  } catch {
    return null;
  }
}
