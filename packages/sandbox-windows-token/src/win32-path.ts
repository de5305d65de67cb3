import { win32 } from 'node:path';

/** Paths this long need the `\\?\` form for the ACL functions (MAX_PATH 260, minus room for an 8.3 name). */
export const LONG_PATH_THRESHOLD = 248;

/** `c:/x/` → `C:\x`: backslashes, an upper-case drive letter, no trailing separator except on a root. */
export function normalizeWin32Path(path: string): string {
  const normal = win32.normalize(path);
  const upper = /^[a-z]:/.test(normal) ? `${normal[0]!.toUpperCase()}${normal.slice(1)}` : normal;
  const root = win32.parse(upper).root;
  return upper.length > root.length && /[\\/]$/.test(upper) ? upper.slice(0, -1) : upper;
}

/** The path to hand to Win32 file functions: unchanged when short, `\\?\C:\…` or `\\?\UNC\server\share\…` when long. */
export function win32ApiPath(path: string): string {
  if (path.length < LONG_PATH_THRESHOLD || path.startsWith('\\\\?\\')) return path;
  if (path.startsWith('\\\\')) return `\\\\?\\UNC\\${path.slice(2)}`;
  return `\\\\?\\${path}`;
}
