import { globToRegExp } from '@ux/protocol-utils';
import { checkedPathList } from './checked-path-list.js';
import type { TomlDocument } from './toml-document.js';

/** An entry with one of these characters is a glob; anything else is a path. */
export const GLOB_CHARACTERS = /[*?[]/;

/**
 * Checks a `deny_read` array: paths or git-style globs, absolute, `~`/`~/…` (the home directory) or
 * relative (to the session directory, resolved by the host). Every mistake is a `ConfigError` at the
 * element.
 */
export function parseDenyReadEntries(
  document: TomlDocument,
  path: readonly (string | number)[],
  value: unknown,
): string[] {
  return checkedPathList(document, path, value, 'paths or globs', denyReadProblem);
}

/** Why a deny-read entry cannot be used, or undefined; shared by config files and `--deny-read`. */
export function denyReadProblem(entry: string): string | undefined {
  if (entry.includes('\0')) return 'a path cannot contain a NUL character';
  if (entry.startsWith('~') && entry !== '~' && !entry.startsWith('~/'))
    return `"${entry}": only ~ and ~/… are expanded (to the home directory); write the path out`;
  if (GLOB_CHARACTERS.test(entry)) {
    try {
      globToRegExp(entry);
    } catch (error) {
      return `"${entry}" is not a valid glob (${(error as Error).message})`;
    }
  }
  return undefined;
}
