import { describe } from './feature-table.js';
import { formatKeyPath, type TomlDocument } from './toml-document.js';

/**
 * A config array of non-empty strings, each passed through `problem` (the same check the matching
 * command-line flag uses). Every mistake is a `ConfigError` at its element; `what` names the array's
 * contents in the message ("paths or globs").
 */
export function checkedPathList(
  document: TomlDocument,
  path: readonly (string | number)[],
  value: unknown,
  what: string,
  problem: (entry: string) => string | undefined,
): string[] {
  if (!Array.isArray(value))
    throw document.error(path, `${formatKeyPath(path)} must be an array of ${what}, got ${describe(value)}`);
  return value.map((item, index) => {
    const at = [...path, index];
    if (typeof item !== 'string' || item === '')
      throw document.error(at, `${formatKeyPath(at)} must be a non-empty string, got ${describe(item)}`);
    const found = problem(item);
    if (found) throw document.error(at, `${formatKeyPath(at)}: ${found}`);
    return item;
  });
}
