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
