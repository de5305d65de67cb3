import { isAbsolutePath } from '@ux/protocol/core';
import { describe, isTable } from './feature-table.js';
import { rejectUnknownKeys } from './reject-unknown-keys.js';
import { strings } from './strings.js';
import { formatKeyPath, type SourceLocation, type TomlDocument } from './toml-document.js';

/**
 * Where a session's commands can run: this machine, a `ux exec-server` reached over WebSocket, or a
 * command speaking the exec-server protocol on its stdin and stdout (`ssh host ux exec-server --listen
 * stdio`, `docker exec -i`, `kubectl exec -i`).
 */
export type EnvironmentConfig =
  | { id: 'local'; kind: 'local' }
  | {
      id: string;
      kind: 'websocket';
      url: string;
      /** The name of the environment variable holding the token (never the token itself). */
      tokenEnv?: string;
      /** The working directory there; default the session's. */
      cwd?: string;
      definedAt: SourceLocation;
    }
  | { id: string; kind: 'command'; command: string[]; cwd?: string; definedAt: SourceLocation };

/** An environment a config or requirements file defines (every kind but `local`). */
export type RemoteEnvironmentConfig = Exclude<EnvironmentConfig, { kind: 'local' }>;

/** The id of this machine's environment: it always exists and no file can define it. */
export const LOCAL_ENVIRONMENT_ID = 'local';

/** Environment names are usable as `--env NAME`. */
export const ENVIRONMENT_NAME = /^[a-z0-9][a-z0-9_-]*$/;
export const ENVIRONMENT_NAME_RULE =
  'lowercase letters, digits, "_" and "-", starting with a letter or digit';

const KEYS = ['url', 'command', 'token_env', 'cwd'];
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Keys (and URL parameters) that would hold a secret. */
const SECRET_NAME = /token|secret|passw|api_?key|auth|bearer|credential/i;
const SECRET_PARAMETER = /token|secret|passw|key|auth|bearer|credential|sig/i;
const TOKEN_ADVICE =
  'a token is never stored in a config file: put it in an environment variable and name that variable with token_env (token_env = "BOX_TOKEN")';

/**
 * Reads `[environments.<name>]` tables (a user config or managed requirements): exactly one of `url`
 * (`ws://` or `wss://`) or `command`, `token_env` with `url` only, `cwd` absolute. Returns them sorted by
 * name. Every mistake is a `ConfigError` at file:line:column; a value that may be a secret is never
 * repeated in a message.
 */
export function parseEnvironments(
  document: TomlDocument,
  path: readonly string[] = ['environments'],
): RemoteEnvironmentConfig[] {
  let table: unknown = document.value;
  for (const key of path) table = (table as Record<string, unknown> | undefined)?.[key];
  if (table === undefined) return [];
  if (!isTable(table))
    throw document.error(
      path,
      `${formatKeyPath(path)} must be a table of [${formatKeyPath(path)}.<name>] tables`,
    );
  const result: RemoteEnvironmentConfig[] = [];
  for (const [name, body] of Object.entries(table)) {
    const at = [...path, name];
    const label = formatKeyPath(at);
    if (name === LOCAL_ENVIRONMENT_ID)
      throw document.error(
        at,
        `${label}: "local" is this machine's environment; it always exists and cannot be defined (choose another name)`,
      );
    if (!ENVIRONMENT_NAME.test(name))
      throw document.error(
        at,
        `environment name ${JSON.stringify(name)} is not usable as --env NAME: use ${ENVIRONMENT_NAME_RULE}`,
      );
    if (!isTable(body)) throw document.error(at, `${label} must be a table`);
    for (const key of Object.keys(body)) {
      if (!KEYS.includes(key) && SECRET_NAME.test(key))
        throw document.error([...at, key], `${formatKeyPath([...at, key])}: ${TOKEN_ADVICE}`);
    }
    rejectUnknownKeys(document, at, body, KEYS);

    const hasUrl = body.url !== undefined;
    const hasCommand = body.command !== undefined;
    if (hasUrl && hasCommand)
      throw document.error(
        [...at, 'command'],
        `${label} sets both url and command: an environment is reached either over WebSocket (url) or through a command speaking the exec-server protocol on stdio (command), not both`,
      );
    if (!hasUrl && !hasCommand)
      throw document.error(
        at,
        `${label} needs url (a ws:// or wss:// address of a ux exec-server) or command (a program speaking the exec-server protocol on stdio, e.g. ["ssh", "host", "ux", "exec-server", "--listen", "stdio"])`,
      );

    let cwd: string | undefined;
    if (body.cwd !== undefined) {
      if (typeof body.cwd !== 'string' || !isAbsolutePath(body.cwd))
        throw document.error(
          [...at, 'cwd'],
          `${label}.cwd must be an absolute path (the working directory there), got ${describe(body.cwd)}`,
        );
      cwd = body.cwd;
    }
    const definedAt = document.locate(at);

    if (hasUrl) {
      const url = parseUrl(document, [...at, 'url'], body.url);
      let tokenEnv: string | undefined;
      if (body.token_env !== undefined) {
        if (typeof body.token_env !== 'string' || !VARIABLE_NAME.test(body.token_env))
          throw document.error(
            [...at, 'token_env'],
            `${label}.token_env must be the name of an environment variable ([A-Za-z_][A-Za-z0-9_]*), not the token itself: the token is read from that variable`,
          );
        tokenEnv = body.token_env;
      }
      result.push({
        id: name,
        kind: 'websocket',
        url,
        ...(tokenEnv === undefined ? {} : { tokenEnv }),
        ...(cwd === undefined ? {} : { cwd }),
        definedAt,
      });
    } else {
      if (body.token_env !== undefined)
        throw document.error(
          [...at, 'token_env'],
          `${label}.token_env applies to url environments only: a command environment authenticates through its command (ssh, docker exec, kubectl exec)`,
        );
      result.push({
        id: name,
        kind: 'command',
        command: parseCommand(document, [...at, 'command'], body.command),
        ...(cwd === undefined ? {} : { cwd }),
        definedAt,
      });
    }
  }
  return result.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

function parseUrl(document: TomlDocument, path: readonly string[], value: unknown): string {
  const label = formatKeyPath(path);
  if (typeof value !== 'string')
    throw document.error(path, `${label} must be a ws:// or wss:// URL, got ${describe(value)}`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw document.error(path, `${label} is not a valid URL (expected ws://HOST:PORT or wss://HOST:PORT)`);
  }
  if (url.username !== '' || url.password !== '')
    throw document.error(path, `${label} must not carry credentials (user:password@): ${TOKEN_ADVICE}`);
  for (const parameter of url.searchParams.keys()) {
    if (SECRET_PARAMETER.test(parameter))
      throw document.error(
        path,
        `${label} must not carry a token (query parameter "${parameter}"): ${TOKEN_ADVICE}`,
      );
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:')
    throw document.error(
      path,
      `${label} must be a ws:// or wss:// URL, got ${url.protocol}// (a ux exec-server listens on WebSocket)`,
    );
  if (url.hostname === '') throw document.error(path, `${label} must name a host (ws://HOST:PORT)`);
  return value;
}

function parseCommand(document: TomlDocument, path: readonly string[], value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0)
    throw document.error(
      path,
      `${formatKeyPath(path)} must be a non-empty array of strings (the program and its arguments), got ${describe(value)}`,
    );
  return strings(document, path, value);
}

/** The environments as `planTools` takes them: whether each one is remote. */
export function toolPlanEnvironments(
  environments: readonly EnvironmentConfig[],
): { id: string; remote: boolean }[] {
  return environments.map((environment) => ({ id: environment.id, remote: environment.kind !== 'local' }));
}
