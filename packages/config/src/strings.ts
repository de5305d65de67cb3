import { describe } from './feature-table.js';
import { formatKeyPath, type TomlDocument } from './toml-document.js';

/** An array of non-empty strings, each mistake a `ConfigError` at its element. */
export function strings(
  document: TomlDocument,
  path: readonly (string | number)[],
  value: unknown,
): string[] {
  if (!Array.isArray(value))
    throw document.error(path, `${formatKeyPath(path)} must be an array of strings, got ${describe(value)}`);
  return value.map((item, index) => {
    if (typeof item !== 'string' || item === '')
      throw document.error(
        [...path, index],
        `${formatKeyPath([...path, index])} must be a non-empty string, got ${describe(item)}`,
      );
    return item;
  });
}
