import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { SandboxUnavailableError } from '@ux/protocol/core';
import { createProcessRuntimeDir } from './ux-runtime-dir.js';

/** A backend's own private temporary directory, made at the first need and removed at `close()`. */
export interface PrivateTmpDir {
  /** The directory; the first call makes it (0700). */
  path(): string;
  /** Removes it when it was made; a later `path()` makes a new one. Never throws. */
  remove(): void;
}

/**
 * The private temporary directory of one backend instance, for backends that grant paths rather than
 * mount a directory in place of `/tmp` (Seatbelt, the Windows token): `configured` when given (it must
 * not exist yet; its parent must), else a new directory in ux's per-user runtime directory
 * (`createProcessRuntimeDir(kind)`). Made 0700 when first asked for (on Windows it inherits its
 * parent's ACL), removed by `remove()` or when the process exits. Removal first renames the directory
 * beside itself, out of the path the backend granted, so no command still running can write into what
 * is being removed; then it removes the renamed tree without following links. `backend` names the
 * backend in errors.
 */
export function privateTmpDir(configured: string | undefined, kind: string, backend: string): PrivateTmpDir {
  let made: string | undefined;
  const onExit = () => removeTree(made);
  return {
    path() {
      if (made !== undefined) return made;
      made = configured === undefined ? createProcessRuntimeDir(kind) : makeOwnDirectory(configured, backend);
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

function makeOwnDirectory(path: string, backend: string): string {
  try {
    mkdirSync(path, { mode: 0o700 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new SandboxUnavailableError({
      backend,
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
      backend,
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
