import { describe, isTable } from './feature-table.js';
import type { Located } from './session-settings.js';
import { formatKeyPath, type SourceLocation, type TomlDocument } from './toml-document.js';

/**
 * One `[sandbox.<id>]` table as written: the backend's own settings, checked by that backend's schema
 * when its plugin loads (`locate` names the line of a key inside it, for the schema's issues).
 */
export interface SandboxSettingsTable {
  value: Record<string, unknown>;
  location: SourceLocation;
  locate(path: readonly (string | number)[]): SourceLocation;
}

/**
 * `sandbox_plugins = ["@acme/ux-sandbox-x", "./plugins/y.mjs"]`: each entry a package name or a path
 * (`./…`, `../…`, `/…` or `~/…`), resolved later relative to the file that names it. Entries keep
 * where they were written so a plugin that fails to load is reported at its file:line.
 */
export function parseSandboxPluginList(
  document: TomlDocument,
  key: string,
  options: { allowEmpty: boolean },
): { values: Located<string>[]; location: SourceLocation } | undefined {
  const value = document.value[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value))
    throw document.error([key], `${key} must be an array of package names or paths, got ${describe(value)}`);
  if (!options.allowEmpty && value.length === 0)
    throw document.error([key], `${key} must name at least one plugin (or leave it out)`);
  const values = value.map((item, index) => {
    const path = [key, index];
    if (typeof item !== 'string')
      throw document.error(path, `${formatKeyPath(path)} must be a string, got ${describe(item)}`);
    const problem = pluginSpecifierProblem(item);
    if (problem) throw document.error(path, `${formatKeyPath(path)}: ${JSON.stringify(item)} ${problem}`);
    return { value: item, location: document.locate(path) };
  });
  const seen = new Set<string>();
  values.forEach((entry, index) => {
    if (seen.has(entry.value))
      throw document.error([key, index], `${key} names ${JSON.stringify(entry.value)} twice`);
    seen.add(entry.value);
  });
  return { values, location: document.locate([key]) };
}

/** Why a `sandbox_plugins` entry is neither a package name nor a path, or undefined. */
export function pluginSpecifierProblem(specifier: string): string | undefined {
  if (specifier.trim() !== specifier || specifier === '') return 'is empty or has surrounding spaces';
  if (isPluginPath(specifier)) return undefined;
  if (/^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*(\/[A-Za-z0-9._~-]+)*$/.test(specifier))
    return undefined;
  return 'is neither a package name (@scope/name, name, name/subpath) nor a path (./file.mjs, ../file.mjs, /abs/file.mjs, ~/file.mjs)';
}

/** Whether a `sandbox_plugins` entry is a path rather than a package name. */
export function isPluginPath(specifier: string): boolean {
  return /^(\.{1,2}\/|\/|~\/)/.test(specifier) || /^[A-Za-z]:[\\/]/.test(specifier);
}

/** `[sandbox.<id>]` tables: one per backend id, any keys (the backend's schema checks them). */
export function parseSandboxTables(
  document: TomlDocument,
  key: string,
): Record<string, SandboxSettingsTable> {
  const value = document.value[key];
  const tables: Record<string, SandboxSettingsTable> = {};
  if (value === undefined) return tables;
  if (!isTable(value)) throw document.error([key], `${key} must be a table of [${key}.<backend id>] tables`);
  for (const [id, body] of Object.entries(value)) {
    if (!/^[a-z][a-z0-9-]*$/.test(id))
      throw document.error(
        [key, id],
        `[${key}.${id}]: "${id}" is not a backend id (lowercase letters, digits, dashes)`,
      );
    if (!isTable(body))
      throw document.error([key, id], `${key}.${id} must be a table of the ${id} backend's settings`);
    tables[id] = {
      value: body,
      location: document.locate([key, id]),
      locate: (path) => document.locate([key, id, ...path]),
    };
  }
  return tables;
}
