import { NetworkProxyError, normalizeHost, parseDomainPattern } from '@ux/network-proxy/patterns';
import { didYouMean, isAbsolutePath } from '@ux/protocol/core';
import { checkedPathList } from './checked-path-list.js';
import { describe, isTable } from './feature-table.js';
import { rejectUnknownKeys } from './reject-unknown-keys.js';
import { formatKeyPath, type SourceLocation, type TomlDocument } from './toml-document.js';

/** What sandboxed commands get: no network, the host's network, or hosts by name through the proxy. */
export type NetworkMode = 'off' | 'on' | 'domains';

/** One pattern of a `network` table, with where it was written. */
export interface NetworkPatternEntry {
  pattern: string;
  location: SourceLocation;
}

/**
 * A `network` value as written: `"off"`, `"on"`, or `{ allow = […], deny = […], ask_unknown = … }`
 * (by domain: the host's allow-list proxy decides each host).
 */
export type NetworkSetting =
  | { mode: 'off' | 'on' }
  | {
      mode: 'domains';
      allow: NetworkPatternEntry[];
      deny: NetworkPatternEntry[];
      /** Whether hosts in neither list are asked about; absent when not written. */
      askUnknown?: { value: boolean; location: SourceLocation };
      /** Where the `allow` list was written (the table when it was not). */
      allowLocation: SourceLocation;
    };

const NETWORK_MODES = ['off', 'on'] as const;
const NETWORK_TABLE_KEYS = ['allow', 'deny', 'ask_unknown'];

/**
 * Reads a `network` value at `path`. Every pattern is checked as the proxy will read it
 * (`parseDomainPattern`), so a mistake is a `ConfigError` at its element, never a proxy that fails to
 * start.
 */
export function parseNetworkSetting(
  document: TomlDocument,
  path: readonly string[],
  value: unknown,
): NetworkSetting {
  const name = formatKeyPath(path);
  if (typeof value === 'string') {
    if ((NETWORK_MODES as readonly string[]).includes(value)) return { mode: value as 'off' | 'on' };
    throw document.error(
      path,
      `${name} must be "off", "on" or a table { allow = […], deny = […] }, got ${describe(value)}${didYouMean(value, NETWORK_MODES)}`,
    );
  }
  if (!isTable(value))
    throw document.error(
      path,
      `${name} must be "off", "on" or a table { allow = […], deny = […] }, got ${describe(value)}${
        typeof value === 'boolean' ? `; write "${value ? 'on' : 'off'}"` : ''
      }`,
    );
  rejectUnknownKeys(document, path, value, NETWORK_TABLE_KEYS);
  const setting: NetworkSetting = {
    mode: 'domains',
    allow: patterns(document, [...path, 'allow'], value.allow, 'allow'),
    deny: patterns(document, [...path, 'deny'], value.deny, 'deny'),
    allowLocation: document.locate(value.allow === undefined ? path : [...path, 'allow']),
  };
  if (value.ask_unknown !== undefined) {
    const at = [...path, 'ask_unknown'];
    if (typeof value.ask_unknown !== 'boolean')
      throw document.error(
        at,
        `${formatKeyPath(at)} must be true or false, got ${describe(value.ask_unknown)}`,
      );
    setting.askUnknown = { value: value.ask_unknown, location: document.locate(at) };
  }
  return setting;
}

function patterns(
  document: TomlDocument,
  path: readonly (string | number)[],
  value: unknown,
  list: 'allow' | 'deny',
): NetworkPatternEntry[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw document.error(
      path,
      `${formatKeyPath(path)} must be an array of host patterns ("example.org", "*.example.org"), got ${describe(value)}`,
    );
  return value.map((item, index) => {
    const at = [...path, index];
    if (typeof item !== 'string')
      throw document.error(at, `${formatKeyPath(at)} must be a string, got ${describe(item)}`);
    const problem = domainPatternProblem(item, list);
    if (problem) throw document.error(at, `${formatKeyPath(at)}: ${problem}`);
    return { pattern: item, location: document.locate(at) };
  });
}

/**
 * Why `pattern` cannot stand in a network allow or deny list, as the proxy would refuse it
 * (`"https://x/" is a URL, not a host name; write "x"`), or undefined. Shared by the config files and
 * `--allow-domain`.
 */
export function domainPatternProblem(pattern: string, list: 'allow' | 'deny'): string | undefined {
  try {
    parseDomainPattern(pattern, list);
    return undefined;
  } catch (error) {
    if (!NetworkProxyError.isInstance(error)) throw error;
    // The proxy's message names its own list ("network.allow: …"); the caller names where it was written.
    return error.message.replace(/^network\.(allow|deny): /, '');
  }
}

/**
 * Whether the allow pattern `narrow` lets through nothing that `wide` does not: the same host (an
 * exact entry), or a name or a wildcard below a wildcard's domain; a port-less `wide` covers every
 * port, one with a port only that port.
 */
export function domainPatternCovers(wide: string, narrow: string): boolean {
  const outer = parseDomainPattern(wide, 'allow');
  const inner = parseDomainPattern(narrow, 'allow');
  if (outer.port !== undefined && outer.port !== inner.port) return false;
  if (outer.kind === 'exact') return inner.kind === 'exact' && inner.host === outer.host;
  if (outer.kind !== 'wildcard') return false;
  const below = (host: string) => host.endsWith(`.${outer.host}`);
  if (inner.kind === 'wildcard') return inner.host === outer.host || below(inner.host);
  // An IP address is never below a domain name, whatever its digits look like.
  return inner.kind === 'exact' && normalizeHost(inner.host)?.kind === 'name' && below(inner.host);
}

/**
 * Reads an `allow_unix_sockets` array: absolute paths, or `~`/`~/…` (the home directory, expanded by
 * the resolution). Every mistake is a `ConfigError` at its element.
 */
export function parseUnixSocketEntries(
  document: TomlDocument,
  path: readonly (string | number)[],
  value: unknown,
): string[] {
  return checkedPathList(document, path, value, 'socket paths', unixSocketProblem);
}

/** Why a unix socket entry cannot be used, or undefined; shared by config files and `--allow-unix-socket`. */
export function unixSocketProblem(entry: string): string | undefined {
  if (entry.includes('\0')) return 'a path cannot contain a NUL character';
  if (entry.startsWith('~') && entry !== '~' && !entry.startsWith('~/'))
    return `"${entry}": only ~ and ~/… are expanded (to the home directory); write the path out`;
  if (!entry.startsWith('~') && !isAbsolutePath(entry))
    return `"${entry}" must be an absolute path (or ~/…): a socket is named the same from every directory`;
  return undefined;
}
