import { ConfigError } from '@ux/protocol/core';
import { getStaticTOMLValue, parseTOML } from 'toml-eslint-parser';

/** Where a value was written: a file position, or a command-line argument (`-c key=value`, no line). */
export interface SourceLocation {
  file: string;
  line?: number;
  column?: number;
}

/** A parsed TOML file that remembers where each key was written. */
export interface TomlDocument {
  file: string;
  value: Record<string, unknown>;
  /** Where a key (or table header, or array element) at `path` was written; the nearest ancestor if unknown. */
  locate(path: readonly (string | number)[]): SourceLocation;
  /** A `ConfigError` pointing at `path`. */
  error(path: readonly (string | number)[], reason: string): ConfigError;
}

interface Node {
  type: string;
  loc: { start: { line: number; column: number } };
  [key: string]: unknown;
}

/** Parses TOML; a syntax error becomes a `ConfigError` with file:line:column. */
export function parseTomlDocument(text: string, file: string): TomlDocument {
  let program: Node;
  try {
    program = parseTOML(text) as unknown as Node;
  } catch (error) {
    const { lineNumber, column, message } = error as {
      lineNumber?: number;
      column?: number;
      message: string;
    };
    throw new ConfigError(
      {
        file,
        line: lineNumber,
        column: column === undefined ? undefined : column + 1,
        reason: `invalid TOML: ${message.charAt(0).toLowerCase()}${message.slice(1)}`,
      },
      { cause: error },
    );
  }
  const locations = new Map<string, SourceLocation>();
  const record = (path: readonly (string | number)[], node: Node) => {
    const id = pathId(path);
    if (!locations.has(id)) {
      locations.set(id, { file, line: node.loc.start.line, column: node.loc.start.column + 1 });
    }
  };
  const visitKeyValue = (prefix: readonly (string | number)[], keyValue: Node) => {
    const keyNode = keyValue.key as Node;
    const names = (keyNode.keys as Node[]).map(keyName);
    for (let i = 1; i <= names.length; i++) record([...prefix, ...names.slice(0, i)], keyNode);
    visitValue([...prefix, ...names], keyValue.value as Node);
  };
  const visitValue = (path: readonly (string | number)[], value: Node) => {
    if (value.type === 'TOMLInlineTable') {
      for (const entry of value.body as Node[]) visitKeyValue(path, entry);
    } else if (value.type === 'TOMLArray') {
      (value.elements as Node[]).forEach((element, index) => {
        record([...path, index], element);
        visitValue([...path, index], element);
      });
    }
  };
  for (const top of program.body as Node[]) {
    for (const item of top.body as Node[]) {
      if (item.type === 'TOMLKeyValue') {
        visitKeyValue([], item);
      } else if (item.type === 'TOMLTable') {
        const tablePath = item.resolvedKey as (string | number)[];
        // `[a.b.c]` also locates `a` and `a.b`, unless they were written earlier.
        for (let i = 1; i <= tablePath.length; i++) record(tablePath.slice(0, i), item.key as Node);
        for (const entry of item.body as Node[]) visitKeyValue(tablePath, entry);
      }
    }
  }
  const value = getStaticTOMLValue(program as never) as unknown as Record<string, unknown>;
  const locate = (path: readonly (string | number)[]): SourceLocation => {
    for (let length = path.length; length > 0; length--) {
      const found = locations.get(pathId(path.slice(0, length)));
      if (found) return found;
    }
    return { file, line: 1, column: 1 };
  };
  return {
    file,
    value,
    locate,
    error: (path, reason) => keyError(locate(path), path, reason),
  };
}

/** Which key each `TomlDocument.error` was about, for `everyConfigError`. */
const ERROR_KEYS = new WeakMap<ConfigError, readonly (string | number)[]>();

/** A `ConfigError` at `location` about the key at `path` (remembered for `everyConfigError`). */
export function keyError(
  location: SourceLocation,
  path: readonly (string | number)[],
  reason: string,
): ConfigError {
  const error = new ConfigError({ ...location, reason });
  ERROR_KEYS.set(error, [...path]);
  return error;
}

/**
 * Every mistake `parse` finds in `document`, not only the first: after each one the key it is about
 * is taken out (the whole array, for an element of one) and the rest parsed again, until the rest
 * parses, a mistake is about no key (or the file as a whole), or the same mistake comes back. Each
 * mistake keeps its file:line:column; they are listed in the order of the file (overrides, which have
 * no line, last). Empty when the document parses.
 */
export function everyConfigError(
  document: TomlDocument,
  parse: (document: TomlDocument) => unknown,
  limit = 100,
): ConfigError[] {
  const errors: ConfigError[] = [];
  const inOrder = () =>
    [...errors].sort(
      (a, b) =>
        (a.line ?? Number.MAX_SAFE_INTEGER) - (b.line ?? Number.MAX_SAFE_INTEGER) ||
        (a.column ?? 0) - (b.column ?? 0),
    );
  let current = document;
  while (errors.length < limit) {
    try {
      parse(current);
      return inOrder();
    } catch (error) {
      if (!ConfigError.isInstance(error)) throw error;
      if (errors.some((seen) => seen.message === error.message)) return inOrder();
      errors.push(error);
      const path = ERROR_KEYS.get(error);
      const firstIndex = path?.findIndex((part) => typeof part === 'number') ?? -1;
      const key = path && firstIndex >= 0 ? path.slice(0, firstIndex) : path;
      if (!key || key.length === 0) return inOrder();
      const value = structuredClone(current.value);
      if (!removeAt(value, key as readonly string[])) return inOrder();
      current = { ...current, value };
    }
  }
  return inOrder();
}

function removeAt(root: Record<string, unknown>, path: readonly string[]): boolean {
  let table: unknown = root;
  for (const key of path.slice(0, -1)) {
    if (typeof table !== 'object' || table === null || !Object.hasOwn(table, key)) return false;
    table = (table as Record<string, unknown>)[key];
  }
  const last = path[path.length - 1]!;
  if (typeof table !== 'object' || table === null || !Object.hasOwn(table, last)) return false;
  delete (table as Record<string, unknown>)[last];
  return true;
}

function keyName(node: Node): string {
  return String(node.type === 'TOMLBare' ? node.name : node.value);
}

function pathId(path: readonly (string | number)[]): string {
  return path.map(String).join('\u0000');
}

/** `features.unified_exec`, `profiles.work.features`, `allowed_sandbox_modes[1]`. */
export function formatKeyPath(path: readonly (string | number)[]): string {
  return path
    .map((part, index) => (typeof part === 'number' ? `[${part}]` : index === 0 ? part : `.${part}`))
    .join('');
}
