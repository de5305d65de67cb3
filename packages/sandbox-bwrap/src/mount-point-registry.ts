import { lstatSync, readdirSync, rmdirSync, unlinkSync } from 'node:fs';
import type { MountTarget } from './bwrap-plan.js';

/**
 * Mount points bwrap creates on the host (empty files where protected paths did not exist). Several
 * sandboxes may share one; it is removed when the last of them is cleaned up, and only if it is still
 * what bwrap made: an empty file or an empty directory.
 */
export class MountPointRegistry {
  private readonly users = new Map<string, number>();

  acquire(targets: readonly MountTarget[]): void {
    for (const target of targets) this.users.set(target.path, (this.users.get(target.path) ?? 0) + 1);
  }

  release(targets: readonly MountTarget[]): string[] {
    const removed: string[] = [];
    for (const target of targets) {
      const count = (this.users.get(target.path) ?? 1) - 1;
      if (count > 0) {
        this.users.set(target.path, count);
        continue;
      }
      this.users.delete(target.path);
      if (removeIfEmpty(target)) removed.push(target.path);
    }
    return removed;
  }
}

function removeIfEmpty(target: MountTarget): boolean {
  try {
    const stat = lstatSync(target.path);
    if (stat.isFile() && stat.size === 0) {
      unlinkSync(target.path);
      return true;
    }
    if (stat.isDirectory() && readdirSync(target.path).length === 0) {
      rmdirSync(target.path);
      return true;
    }
  } catch {
    // Gone already, or not ours to remove.
  }
  return false;
}
