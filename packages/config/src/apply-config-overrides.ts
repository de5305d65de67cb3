import { isTable } from './feature-table.js';
import { type ConfigOverride, configOverrideLabel } from './parse-config-override.js';
import { keyError, type SourceLocation, type TomlDocument } from './toml-document.js';

/**
 * `config.toml` with the `-c` overrides written into it, later ones winning, as if the file said so:
 * the result is validated by the same parser, and whatever an override set is located at its argument
 * (`-c sandbox_mode=read-onyl`), everything else at its place in the file. `base` is undefined when
 * the file does not exist.
 */
export function applyConfigOverrides(
  base: TomlDocument | undefined,
  overrides: readonly ConfigOverride[],
  file: string,
): TomlDocument {
  if (overrides.length === 0 && base) return base;
  const value = structuredClone(base?.value ?? {});
  for (const override of overrides) setAt(value, override.path, override.value);

  const at = (override: ConfigOverride): SourceLocation => ({ file: configOverrideLabel(override.argument) });
  const latest = [...overrides].reverse();
  const locate = (path: readonly (string | number)[]): SourceLocation => {
    // Set by an override, or inside what one set.
    const owner = latest.find((override) => startsWith(path, override.path));
    if (owner) return at(owner);
    if (base && has(base.value, path)) return base.locate(path);
    // A table only an override created.
    const creator = latest.find((override) => startsWith(override.path, path));
    if (creator) return at(creator);
    return base ? base.locate(path) : { file };
  };
  return {
    file: base?.file ?? file,
    value,
    locate,
    error: (path, reason) => keyError(locate(path), path, reason),
  };
}

function setAt(root: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let table = root;
  for (const key of path.slice(0, -1)) {
    // A dotted key through a non-table replaces it, as in Codex.
    if (!isTable(table[key])) table[key] = {};
    table = table[key] as Record<string, unknown>;
  }
  table[path[path.length - 1]!] = value;
}

function has(root: unknown, path: readonly (string | number)[]): boolean {
  let current = root;
  for (const key of path) {
    if (typeof current !== 'object' || current === null || !(key in current)) return false;
    current = (current as Record<string | number, unknown>)[key];
  }
  return true;
}

function startsWith(path: readonly (string | number)[], prefix: readonly (string | number)[]): boolean {
  return prefix.length <= path.length && prefix.every((part, index) => path[index] === part);
}
