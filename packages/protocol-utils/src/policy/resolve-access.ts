import { posix, win32 } from 'node:path';
import type { FileSystemAccess, FileSystemEntry, FileSystemPath, FileSystemPolicy } from '@ux/protocol/core';
import { globToRegExp } from './glob-to-regexp.js';

/** What the symbolic locations of a policy mean for one run. */
export interface PolicyContext {
  /** Absolute working directory of the command. */
  cwd: string;
  /** Workspace roots for `project_roots`; defaults to `[cwd]`. */
  projectRoots?: readonly string[];
  /** `$TMPDIR`, when set and non-empty. */
  tmpdir?: string;
  /** Home directory, for `~` in paths. */
  homeDir?: string;
  /** What `minimal` expands to on this platform; backends supply it. Defaults to nothing. */
  minimalRoots?: readonly string[];
  /** Path flavour of the policy; Windows plans are built on any OS. Defaults to `posix`. */
  pathStyle?: 'posix' | 'win32';
}

/** One entry with its locations made concrete. */
export interface ResolvedEntry {
  access: FileSystemAccess;
  /** Absolute path (prefix match) or compiled glob. */
  target: { kind: 'path'; path: string } | { kind: 'glob'; pattern: string; regexp: RegExp };
  /** Number of path components; the most specific entry wins. */
  specificity: number;
  entry: FileSystemEntry;
}

const ACCESS_RANK: Record<FileSystemAccess, number> = { read: 0, write: 1, none: 2 };

/** Makes every entry of a restricted policy concrete for a context. Unrestricted policies have no entries. */
export function resolveEntries(policy: FileSystemPolicy, context: PolicyContext): ResolvedEntry[] {
  if (policy.kind !== 'restricted') return [];
  const api = context.pathStyle === 'win32' ? win32 : posix;
  const resolved: ResolvedEntry[] = [];
  for (const entry of policy.entries) {
    if (entry.path.type === 'glob') {
      const pattern = toAbsolute(entry.path.pattern, context, api);
      resolved.push({
        access: entry.access,
        target: { kind: 'glob', pattern, regexp: globToRegExp(comparable(pattern, api)) },
        specificity: components(pattern),
        entry,
      });
      continue;
    }
    for (const path of concretePaths(entry.path, context, api)) {
      resolved.push({
        access: entry.access,
        target: { kind: 'path', path },
        specificity: components(path),
        entry,
      });
    }
  }
  return resolved;
}

/**
 * The access a policy grants to one absolute path: among the entries that cover it (a path entry covers
 * itself and everything below; a glob covers what it matches and everything below that), the one with the
 * most path components wins, and at equal depth `none` > `write` > `read`. No entry means `none`.
 * `unrestricted` and `external-sandbox` grant `write` everywhere (ux enforces nothing there).
 */
export function resolveAccess(
  policy: FileSystemPolicy,
  path: string,
  context: PolicyContext,
): FileSystemAccess {
  if (policy.kind !== 'restricted') return 'write';
  const api = context.pathStyle === 'win32' ? win32 : posix;
  const candidate = comparable(toAbsolute(path, context, api), api);
  let best: ResolvedEntry | undefined;
  for (const resolved of resolveEntries(policy, context)) {
    if (!covers(resolved, candidate, api)) continue;
    if (
      best === undefined ||
      resolved.specificity > best.specificity ||
      (resolved.specificity === best.specificity && ACCESS_RANK[resolved.access] > ACCESS_RANK[best.access])
    ) {
      best = resolved;
    }
  }
  return best?.access ?? 'none';
}

function covers(resolved: ResolvedEntry, candidate: string, api: typeof posix): boolean {
  if (resolved.target.kind === 'path') {
    const target = comparable(resolved.target.path, api);
    // Only a root ends in a separator (`/`, `c:/`); everything else is matched per component.
    if (target.endsWith('/')) return candidate.startsWith(target);
    return candidate === target || candidate.startsWith(`${target}/`);
  }
  // A glob covers a match and everything below it, so `**/secrets` hides a whole directory.
  for (let current = candidate; ; current = posix.dirname(current)) {
    if (resolved.target.regexp.test(current)) return true;
    if (posix.dirname(current) === current) return false;
  }
}

function concretePaths(path: FileSystemPath, context: PolicyContext, api: typeof posix): string[] {
  if (path.type === 'path') return [toAbsolute(path.path, context, api)];
  if (path.type === 'glob') return [];
  const below = (bases: readonly string[]) =>
    bases.map((base) => (path.subpath ? api.resolve(base, path.subpath) : api.normalize(base)));
  switch (path.value) {
    case 'root':
      return below([api.parse(api.resolve(context.cwd)).root]);
    case 'minimal':
      return below(context.minimalRoots ?? []);
    case 'cwd':
      return below([context.cwd]);
    case 'project_roots':
      return below(context.projectRoots ?? [context.cwd]);
    case 'tmpdir':
      return context.tmpdir ? below([context.tmpdir]) : [];
    case 'slash_tmp':
      return api === win32 ? [] : below(['/tmp']);
  }
}

function toAbsolute(path: string, context: PolicyContext, api: typeof posix): string {
  if ((path === '~' || path.startsWith('~/')) && context.homeDir) {
    return api.resolve(context.homeDir, path.slice(2));
  }
  return api.resolve(context.cwd, path);
}

/** A `/`-separated form for matching; Windows paths also compare case-insensitively. */
function comparable(path: string, api: typeof posix): string {
  return api === win32 ? path.replace(/\\/g, '/').toLowerCase() : path;
}

function components(path: string): number {
  return path.split(/[\\/]+/).filter((part) => part !== '' && !/^[A-Za-z]:$/.test(part)).length;
}
