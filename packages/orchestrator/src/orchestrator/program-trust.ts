import { accessSync, constants, readlinkSync } from 'node:fs';
import { isAbsolute, join, posix } from 'node:path';
import { isUnder } from '@ux/protocol-utils';
import type { EscalationScope } from './escalation-scope.js';
import { changedSince, lstatNs, statNs } from './session-changes.js';

/** A program file by identity: the same file whatever path or link leads to it. */
export interface ProgramFile {
  /** Its canonical path (every link resolved). */
  real: string;
  dev: bigint;
  ino: bigint;
}

export type ProgramTrust = ({ trusted: true } & ProgramFile) | { trusted: false; why: string };

/**
 * Directories whose entries are not the host's files of the same name inside a sandbox (bubblewrap
 * mounts its own `/dev` and `/proc`; `/proc/self/…` names the asking process), so a program named there
 * is never run outside.
 */
const SANDBOX_OWN_DIRECTORIES = ['/dev', '/proc'] as const;

/**
 * Whether `program` (absolute, as the sandboxed shell named it) may run outside the sandbox: decided on
 * the file, never on its name. Every entry the path goes through (each directory, each link and the
 * links it leads to, the file) must lie outside every directory the sandbox can write, so nothing on
 * the way can be swapped between this check and the exec; the path must not lie in `/tmp`, `$TMPDIR`,
 * `/dev` or `/proc` as the sandbox sees them; the file and the links on the way must predate the session
 * (`ctime`). The answer names the first thing that fails.
 */
export function programTrust(program: string, scope: EscalationScope): ProgramTrust {
  for (const root of scope.tmpRoots) {
    // A workspace inside /tmp is bound at its own path: the walk below names it.
    const inLayoutRoot = scope.layoutRoots.some(
      (layout) => layout !== root && isUnder(layout, root) && isUnder(program, layout),
    );
    if (isUnder(program, root) && !inLayoutRoot) {
      return {
        trusted: false,
        why: scope.privateTmp
          ? `${program} lies in ${root}, the sandbox's private temporary directory (the host's file of that name is another one)`
          : `${program} lies in ${root}, a temporary directory the sandbox can write`,
      };
    }
  }
  for (const root of SANDBOX_OWN_DIRECTORIES) {
    if (isUnder(program, root))
      return { trusted: false, why: `${program} lies in ${root}, which the sandbox mounts for itself` };
  }
  const walk = resolvePath(program);
  if ('problem' in walk) return { trusted: false, why: `${program}: ${walk.problem}` };
  // The innermost root that holds a path (the workspace, not the /tmp around it).
  const innermost = (path: string) =>
    scope.writableRoots.filter((root) => isUnder(path, root)).sort((a, b) => b.length - a.length)[0];
  for (const entry of walk.visited) {
    if (innermost(entry) !== undefined) {
      const lexical = innermost(program);
      if (lexical !== undefined)
        return { trusted: false, why: `${program} lies in ${lexical}, which the sandbox can write` };
      const deepest = walk.visited.filter((visited) => innermost(visited) !== undefined).at(-1)!;
      return {
        trusted: false,
        why: `${program} leads to ${deepest} in ${innermost(deepest)}, which the sandbox can write`,
      };
    }
    for (const own of SANDBOX_OWN_DIRECTORIES) {
      if (isUnder(entry, own))
        return { trusted: false, why: `${program} leads to ${entry}, which the sandbox mounts for itself` };
    }
  }
  for (const link of walk.links) {
    const stat = lstatNs(link);
    if (stat && changedSince(stat, scope.sessionStartMs))
      return {
        trusted: false,
        why: `${program} goes through the link ${link}, made or changed during this session`,
      };
  }
  const stat = statNs(walk.real);
  if (!stat?.isFile()) return { trusted: false, why: `${program} is not a regular file` };
  if (changedSince(stat, scope.sessionStartMs)) {
    const which = walk.real === program ? program : `${program} (${walk.real})`;
    return { trusted: false, why: `${which} was created or changed during this session` };
  }
  return { trusted: true, real: walk.real, dev: stat.dev, ino: stat.ino };
}

/** The file at `path` (links followed) by identity, or undefined when there is none. */
export function programFile(path: string): ProgramFile | undefined {
  const walk = resolvePath(path);
  if ('problem' in walk) return undefined;
  const stat = statNs(walk.real);
  if (!stat?.isFile()) return undefined;
  return { real: walk.real, dev: stat.dev, ino: stat.ino };
}

/**
 * The file the session's starting `PATH` finds for a bare program name, as `execvp` would: the first
 * absolute directory holding an executable regular file of that name. Relative entries (`.`, empty)
 * are skipped: they would mean the shell's current directory.
 */
export function startingPathProgram(name: string, path: string | undefined): ProgramFile | undefined {
  if (!name || name.includes('/')) return undefined;
  for (const dir of (path ?? '').split(':')) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    const file = programFile(candidate);
    if (!file) continue;
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    return file;
  }
  return undefined;
}

export function sameFile(
  a: Pick<ProgramFile, 'dev' | 'ino'> | undefined,
  b: Pick<ProgramFile, 'dev' | 'ino'> | undefined,
): boolean {
  return a !== undefined && b !== undefined && a.dev === b.dev && a.ino === b.ino;
}

const MAX_LINKS = 40;

/**
 * Resolves an absolute path one entry at a time, as the kernel does (`..` after a link goes up from
 * where the link led), recording every entry looked up on the way (`visited`: canonical paths of
 * directories, links and the final file) and the links among them.
 */
export function resolvePath(
  path: string,
): { real: string; visited: string[]; links: string[] } | { problem: string } {
  if (!path.startsWith('/')) return { problem: 'not an absolute path' };
  const visited: string[] = [];
  const links: string[] = [];
  const pending = path.split('/').filter((part) => part !== '');
  let resolved = '/';
  let hops = 0;
  while (pending.length > 0) {
    const name = pending.shift()!;
    if (name === '.') continue;
    if (name === '..') {
      resolved = posix.dirname(resolved);
      continue;
    }
    const entry = posix.join(resolved, name);
    visited.push(entry);
    const stat = lstatNs(entry);
    if (!stat) return { problem: `${entry} does not exist` };
    if (stat.isSymbolicLink()) {
      if (++hops > MAX_LINKS) return { problem: 'too many links' };
      links.push(entry);
      let target: string;
      try {
        target = readlinkSync(entry);
      } catch {
        return { problem: `cannot read the link ${entry}` };
      }
      if (target.startsWith('/')) resolved = '/';
      pending.unshift(...target.split('/').filter((part) => part !== ''));
      continue;
    }
    if (pending.length > 0 && !stat.isDirectory()) return { problem: `${entry} is not a directory` };
    resolved = entry;
  }
  return { real: resolved, visited, links };
}
