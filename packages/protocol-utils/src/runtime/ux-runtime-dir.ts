import { randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, type Stats } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { SandboxUnavailableError } from '@ux/protocol/core';

/**
 * Where every ux process of this user keeps its runtime files (docs/threat-model.md): the bwrap
 * backend's host files, the network proxy's socket, the escalation broker's sockets, an exec-server's
 * snapshot directories, the private `/tmp` of a session. One root per user, the same for every ux
 * process whatever its `UX_HOME`, so every sandbox of every ux process can hide all of them: a command
 * of one session must not rewrite the files another ux process trusts.
 *
 * Candidates, in order: `/run/user/<uid>/ux` when `/run/user/<uid>` is this user's own directory (the
 * login manager's per-user runtime directory), else `/tmp/ux-<uid>`. Windows: the temporary directory.
 */
export function uxRuntimeRoots(uid: number | undefined = process.getuid?.()): string[] {
  if (uid === undefined) return [join(tmpdir(), `ux-${safeName(userInfo().username)}`)];
  return [`/run/user/${uid}/ux`, `/tmp/ux-${uid}`];
}

/** The root this process uses (see `uxRuntimeRoots`): the first candidate whose parent is the user's. */
export function uxRuntimeRoot(uid: number | undefined = process.getuid?.()): string {
  const [perUser, fallback] = uxRuntimeRoots(uid);
  if (uid === undefined || fallback === undefined) return perUser!;
  const parent = statOrUndefined(`/run/user/${uid}`);
  return parent?.isDirectory() && parent.uid === uid ? perUser! : fallback;
}

/**
 * Makes the root when missing (0700) and checks it: a directory, not a link, owned by this user, with
 * no access for anyone else (a wider mode of the user's own directory is narrowed). Anything else is a
 * `SandboxUnavailableError` saying how to fix it: another user's directory at a predictable path in
 * `/tmp` would otherwise hold this user's sockets and private files.
 */
export function ensureUxRuntimeRoot(root: string = uxRuntimeRoot()): string {
  try {
    mkdirSync(root, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      throw unsafe(root, `cannot be created (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const stat = lstatSync(root);
  const uid = process.getuid?.();
  if (stat.isSymbolicLink()) throw unsafe(root, 'is a symbolic link');
  if (!stat.isDirectory()) throw unsafe(root, 'is not a directory');
  if (uid !== undefined && stat.uid !== uid) throw unsafe(root, `belongs to uid ${stat.uid}, not ${uid}`);
  if (uid !== undefined && (stat.mode & 0o077) !== 0) chmodSync(root, 0o700);
  return root;
}

/**
 * A new private directory (0700) for one ux process inside the runtime root:
 * `<root>/<kind>-<pid>-<random>`. `kind` names what it holds (`bwrap`, `net`, `esc`, `exec-server`).
 */
export function createProcessRuntimeDir(kind: string, root: string = ensureUxRuntimeRoot()): string {
  if (!/^[a-z][a-z0-9-]{0,15}$/.test(kind))
    throw new TypeError(`runtime directory kind must be a short lowercase name, got ${JSON.stringify(kind)}`);
  const dir = join(root, `${kind}-${process.pid}-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

/** The pid a process runtime directory's name carries (`bwrap-1234-abcd` → 1234), for sweeping. */
export function runtimeDirPid(name: string): number | undefined {
  const match = /^[a-z][a-z0-9-]*?-(\d+)-[0-9a-f]{8}$/.exec(name);
  return match ? Number(match[1]) : undefined;
}

function unsafe(root: string, why: string): SandboxUnavailableError {
  return new SandboxUnavailableError({
    reason: `ux's runtime directory ${root} ${why}`,
    fix: `remove it (rm -rf ${root}) so ux can make its own, or give this user a runtime directory of its own (/run/user/<uid>)`,
  });
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]/g, '_') || 'user';
}
