import { didYouMean } from '@ux/protocol/core';
import { formatKeyPath, type TomlDocument } from './toml-document.js';

/** A `ConfigError` for the first key of `table` that is not in `known`, with close matches. */
export function rejectUnknownKeys(
  document: TomlDocument,
  path: readonly string[],
  table: Record<string, unknown>,
  known: readonly string[],
): void {
  for (const key of Object.keys(table)) {
    if (known.includes(key)) continue;
    const keyPath = [...path, key];
    const hint = didYouMean(key, known) || `; known keys here: ${known.join(', ')}`;
    throw document.error(keyPath, `unknown key ${formatKeyPath(keyPath)}${hint}`);
  }
}
