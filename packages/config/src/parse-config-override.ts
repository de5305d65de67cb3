import { ConfigError } from '@ux/protocol/core';
import { isTable } from './feature-table.js';
import { parseTomlDocument } from './toml-document.js';

/** One `-c key=value` from the command line: a dotted key path and its value. */
export interface ConfigOverride {
  /** The argument as given, for messages (`sandbox_workspace_write.network_access=true`). */
  argument: string;
  /** `['sandbox_workspace_write', 'network_access']`. */
  path: string[];
  value: unknown;
}

/**
 * Reads `key=value` as Codex does: the key is a TOML key (dotted, quoted parts allowed), the value is
 * TOML (`true`, `3`, `["~/.ssh"]`, `{ inherit = "core" }`) and, when it is not, the text as a string
 * (`sandbox_mode=read-only`). A malformed key is a `ConfigError` whose file is `-c <argument>`.
 */
export function parseConfigOverride(argument: string): ConfigOverride {
  const file = configOverrideLabel(argument);
  const equals = argument.indexOf('=');
  if (equals === -1)
    throw new ConfigError({ file, reason: 'expected key=value (e.g. -c sandbox_mode=read-only)' });
  const keyText = argument.slice(0, equals).trim();
  const valueText = argument.slice(equals + 1);
  let path: string[];
  try {
    path = keyPath(parseTomlDocument(`${keyText} = 0`, file).value);
  } catch {
    throw new ConfigError({
      file,
      reason: `"${keyText}" is not a config key (dotted TOML keys, e.g. features.unified_exec)`,
    });
  }
  return { argument, path, value: tomlValue(valueText) ?? valueText };
}

/** How a `-c` argument is named where a file name would stand (`-c sandbox_mode=read-only`). */
export function configOverrideLabel(argument: string): string {
  return `-c ${argument}`;
}

/** Whether a `ConfigError`'s file is a `-c` argument rather than a file. */
export function isConfigOverrideLabel(file: string): boolean {
  return file.startsWith('-c ');
}

/** The one key path of `{ a: { b: 0 } }`. */
function keyPath(root: Record<string, unknown>): string[] {
  const path: string[] = [];
  let current: unknown = root;
  while (isTable(current)) {
    const keys = Object.keys(current);
    if (keys.length !== 1) throw new Error('not one key');
    path.push(keys[0]!);
    current = current[keys[0]!];
  }
  return path;
}

/** The value as TOML, or undefined when it is not exactly one TOML value. */
function tomlValue(text: string): unknown {
  try {
    const root = parseTomlDocument(`value = ${text}`, 'value').value;
    // `1\nother = 2` is two keys: not one value.
    return Object.keys(root).length === 1 ? root.value : undefined;
  } catch {
    return undefined;
  }
}
