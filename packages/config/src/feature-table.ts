import {
  type FeatureAssignment,
  type FeatureKey,
  type FeatureLayer,
  featureKeys,
  findFeature,
} from '@ux/features';
import { didYouMean, formatLocation } from '@ux/protocol/core';
import { formatKeyPath, type TomlDocument } from './toml-document.js';

export interface FeatureTable {
  assignments: FeatureAssignment[];
  warnings: string[];
}

/**
 * Reads a `[features]` table: known keys must be booleans; legacy names are mapped with a warning;
 * removed features are ignored with a warning; anything else is a `ConfigError` at the key.
 */
export function parseFeatureTable(
  document: TomlDocument,
  path: readonly string[],
  layer: FeatureLayer,
  profile?: string,
): FeatureTable {
  const table = valueAt(document.value, path);
  const result: FeatureTable = { assignments: [], warnings: [] };
  if (table === undefined) return result;
  if (!isTable(table))
    throw document.error(path, `${formatKeyPath(path)} must be a table of feature = true/false`);
  for (const [name, value] of Object.entries(table)) {
    const keyPath = [...path, name];
    const location = document.locate(keyPath);
    const where = formatLocation({ file: location.file, line: location.line });
    const found = findFeature(name);
    if (!found) {
      const hint = didYouMean(name, featureKeys()) || ` (known features: ${featureKeys().join(', ')})`;
      throw document.error(keyPath, `unknown feature "${name}"${hint}`);
    }
    if (typeof value !== 'boolean') {
      throw document.error(
        keyPath,
        `${formatKeyPath(keyPath)} must be true or false, got ${describe(value)}`,
      );
    }
    const { definition, legacy } = found;
    if (definition.stage === 'removed') {
      result.warnings.push(
        `${formatKeyPath(keyPath)} at ${where}: feature "${name}" was removed${
          definition.removedNote ? ` (${definition.removedNote})` : ''
        }; the setting is ignored`,
      );
      continue;
    }
    if (legacy) {
      result.warnings.push(
        `${formatKeyPath(keyPath)} at ${where} is a legacy name; write ${formatKeyPath([...path, definition.key])} instead`,
      );
    }
    result.assignments.push({ key: definition.key as FeatureKey, enabled: value, layer, location, profile });
  }
  return result;
}

export function valueAt(root: unknown, path: readonly string[]): unknown {
  let current = root;
  for (const part of path) {
    if (!isTable(current)) return undefined;
    current = current[part];
  }
  return current;
}

export function isTable(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

export function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  if (isTable(value)) return 'a table';
  return String(value);
}
