import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { createProcessRuntimeDir, SandboxUnavailableError } from '@ux/protocol/core';

/** A backend's own private temporary directory, made at the first need and removed at `close()`. */
export interface PrivateTmpDir {
  /** The directory; the first call makes it (0700). */
  path(): string;
  /** Removes it when it was made; a later `path()` makes a new one. Never throws. */
  remove(): void;
}

/**
 * The private `/tmp` of one backend instance: `configured` when given (it must not exist yet; its
 * parent must), else a new directory in ux's per-user runtime directory (`createProcessRuntimeDir`).
 * Made when first asked for (0700 where modes mean something; on Windows it inherits its parent's ACL,
 * and each run grants it to that run's SID only), removed by `remove()` or when the process exits.
 * Removal first renames the directory beside itself, then removes the renamed tree without following
 * links or junctions. Call it once the commands have ended (the launcher runs each in a job that dies
 * with it).
 */
export function privateTmpDir(configured: string | undefined, kind = 'windows-tmp'): PrivateTmpDir {
  let made: string | undefined;
  const onExit = () => removeTree(made);
  return {
    path() {
      if (made !== undefined) return made;
      made = configured === undefined ? createProcessRuntimeDir(kind) : makeOwnDirectory(configured);
      process.once('exit', onExit);
      return made;
    },
    remove() {
      if (made === undefined) return;
      process.off('exit', onExit);
      removeTree(made);
      made = undefined;
    },
  };
}

function makeOwnDirectory(path: string): string {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new SandboxUnavailableError({
      backend: 'windows-token',
      reason:
        code === 'EEXIST'
          ? `the private temporary directory ${path} exists already; the backend makes its own`
          : `the private temporary directory ${path} cannot be created (${code})`,
      fix: 'leave privateTmpDir unset (ux keeps it in its runtime directory), or name a directory that does not exist yet in one that does',
    });
  }
  const stat = lstatSync(path);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) {
    throw new SandboxUnavailableError({
      backend: 'windows-token',
      reason: `the private temporary directory ${path} is not a directory of this user`,
      fix: 'leave privateTmpDir unset (ux keeps it in its runtime directory)',
    });
  }
  return path;
}

function removeTree(path: string | undefined): void {
  if (path === undefined) return;
  const away = `${path}.removing-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(path, away);
  } catch {
    // Gone already, or cannot be moved: nothing a command can still reach is removed by path.
    return;
  }
  try {
    rmSync(away, { recursive: true, force: true });
  } catch {
    // What stays is the commands' own scratch files, in a directory only this user can open.
  }
}
