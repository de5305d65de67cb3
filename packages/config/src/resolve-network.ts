import { posix } from 'node:path';
import { ConfigError, formatLocation, type SandboxMode, UxError } from '@ux/protocol/core';
import { domainPatternCovers, type NetworkMode, type NetworkSetting } from './network-setting.js';
import type { Requirements } from './requirements.js';
import type { SandboxNetworkSettings } from './session-settings.js';
import type { SourceLocation } from './toml-document.js';

/** A pattern of the effective allow or deny list, and who put it there (`file:line:column` or a flag). */
export interface NetworkListEntry {
  pattern: string;
  source: string;
}

/** The network sandboxed commands of a session get, after flags and the requirements' cap. */
export interface ResolvedNetwork {
  /** `off`: none; `on`: the host's network; `domains`: only through the host's allow-list proxy. */
  mode: NetworkMode;
  /** Who chose the mode: `default`, a flag, `file:line:column`, or the sandbox mode. */
  source: string;
  /** Where a config file chose the mode, when one did (not a flag). */
  location?: SourceLocation;
  /** With `domains`: hosts reached without a question (the user's entries; each within the cap). */
  allow: NetworkListEntry[];
  /** With `domains`: hosts never reached (the requirements' entries first, then the user's). */
  deny: NetworkListEntry[];
  /** With `domains`: whether hosts in neither list are asked about (else denied without a question). */
  askUnknown: { value: boolean; source: string };
  /** The requirements' `network`, when they set one: the widest this session may get. */
  cap?: { mode: NetworkMode; source: string; allow: string[]; deny: string[]; askUnknown?: boolean };
}

/** A unix socket sandboxed commands may connect to (absolute), and who allowed it. */
export interface UnixSocketEntry {
  path: string;
  source: string;
  /** Where a config file listed it (absent for a flag). */
  location?: SourceLocation;
}

export interface NetworkChoices {
  /** `--network` (true) / `--no-network` (false). */
  network?: { value: boolean; flag: string };
  /** `--allow-domain HOST`, one per flag (valid patterns; the CLI checks them). */
  allowDomains?: { value: string; flag: string }[];
  /** `--allow-unix-socket PATH`, absolute, one per flag. */
  allowUnixSockets?: { value: string; flag: string }[];
}

export interface ResolveNetworkInput {
  sandboxMode: { value: SandboxMode; source: string };
  /** The sandbox mode's own table: `[sandbox_workspace_write]` or `[sandbox_read_only]`. */
  table?: SandboxNetworkSettings;
  requirements?: Requirements;
  cli?: NetworkChoices;
  /** Expands `~` and `~/…` in `allow_unix_sockets`; entries stay as written without it. */
  homeDir?: string;
}

/**
 * The session's network and unix sockets: the mode's table (`network`, `allow_unix_sockets`), then the
 * flags (`--no-network`, `--network`, `--allow-domain` over the table's network; `--allow-unix-socket`
 * added), then the requirements, which only narrow: a wider choice is a `ConfigError` at the
 * requirements file naming where the choice was made. A mode without a ux sandbox
 * (danger-full-access) cannot honour a cap and is refused when the requirements set one.
 */
export function resolveNetwork(input: ResolveNetworkInput): {
  network: ResolvedNetwork;
  allowUnixSockets: UnixSocketEntry[];
} {
  const { sandboxMode, requirements } = input;
  const cap = requirements?.network;
  const socketCap = requirements?.allowUnixSockets;
  const capView = cap && describeCap(cap.value, cap.location);
  const unsandboxed = `sandbox mode ${sandboxMode.value} (from ${sandboxMode.source})`;
  if (sandboxMode.value === 'danger-full-access') {
    const pinned =
      cap && cap.value.mode !== 'on'
        ? { location: cap.location, what: `network = ${capText(cap.value)}` }
        : socketCap && { location: socketCap.location, what: 'allow_unix_sockets' };
    if (pinned)
      throw new ConfigError({
        ...pinned.location,
        reason: `${unsandboxed} runs commands without a sandbox, so ${pinned.what} here could not be enforced; choose read-only or workspace-write`,
      });
    return {
      network: {
        mode: 'on',
        source: `${unsandboxed}: no sandbox`,
        allow: [],
        deny: [],
        askUnknown: { value: true, source: 'default' },
        ...(capView ? { cap: capView } : {}),
      },
      allowUnixSockets: [],
    };
  }
  if (sandboxMode.value === 'external-sandbox')
    return {
      network: {
        mode: 'off',
        source: `${unsandboxed}: the outer sandbox decides`,
        allow: [],
        deny: [],
        askUnknown: { value: true, source: 'default' },
        ...(capView ? { cap: capView } : {}),
      },
      allowUnixSockets: [],
    };

  const { explicitAsk, ...network } = chooseNetwork(input.table?.network, input.cli);
  if (cap) checkNetworkCap(network, cap, capView!, explicitAsk);
  if (capView) network.cap = capView;
  return { network, allowUnixSockets: unixSockets(input) };
}

/** The table's `network` (default off) with the flags over it. */
function chooseNetwork(
  configured: { value: NetworkSetting; location: SourceLocation } | undefined,
  cli: NetworkChoices | undefined,
): ResolvedNetwork & { explicitAsk?: string } {
  const base = configured?.value ?? { mode: 'off' as const };
  const source = configured ? formatLocation(configured.location) : 'default';
  const domains = cli?.allowDomains ?? [];
  if (domains.length > 0 && cli?.network)
    throw new UxError(
      'invalid_arguments',
      `${domains[0]!.flag} limits the network to listed hosts and ${cli.network.flag} ${
        cli.network.value ? 'gives all of it' : 'takes it away'
      }; give one`,
    );
  const listed =
    base.mode === 'domains'
      ? {
          allow: base.allow.map((entry) => ({
            pattern: entry.pattern,
            source: formatLocation(entry.location),
          })),
          deny: base.deny.map((entry) => ({
            pattern: entry.pattern,
            source: formatLocation(entry.location),
          })),
          askUnknown: base.askUnknown
            ? { value: base.askUnknown.value, source: formatLocation(base.askUnknown.location) }
            : { value: true, source: 'default' },
          ...(base.askUnknown?.value ? { explicitAsk: formatLocation(base.askUnknown.location) } : {}),
        }
      : { allow: [], deny: [], askUnknown: { value: true, source: 'default' } };
  if (cli?.network)
    return {
      mode: cli.network.value ? 'on' : 'off',
      source: cli.network.flag,
      allow: [],
      deny: [],
      askUnknown: { value: true, source: 'default' },
    };
  if (domains.length > 0)
    return {
      mode: 'domains',
      source:
        base.mode === 'domains'
          ? `${source} and ${domains.map((d) => d.flag).join(', ')}`
          : domains.map((d) => d.flag).join(', '),
      ...listed,
      allow: unique([
        ...listed.allow,
        ...domains.map(({ value, flag }) => ({ pattern: value, source: flag })),
      ]),
    };
  const location = configured ? { location: configured.location } : {};
  if (base.mode !== 'domains')
    return {
      mode: base.mode,
      source,
      ...location,
      allow: [],
      deny: [],
      askUnknown: { value: true, source: 'default' },
    };
  return { mode: 'domains', source, ...location, ...listed };
}

/**
 * Refuses a network wider than the requirements' `cap`; narrows `network` in place (the cap's deny
 * entries first, its `ask_unknown = false`). `explicitAsk`: where the user wrote `ask_unknown = true`.
 */
function checkNetworkCap(
  network: ResolvedNetwork,
  cap: { value: NetworkSetting; location: SourceLocation },
  view: NonNullable<ResolvedNetwork['cap']>,
  explicitAsk: string | undefined,
): void {
  const setting = cap.value;
  if (setting.mode === 'on' || network.mode === 'off') return;
  const chosen = network.mode === 'on' ? 'network "on"' : 'network by domain';
  if (setting.mode === 'off')
    throw new ConfigError({
      ...cap.location,
      reason: `${chosen} (from ${network.source}) is not allowed here: network = "off" (sandboxed commands get no network)`,
    });
  if (setting.mode !== 'domains') return;
  const allowed = `network.allow = ${formatList(view.allow)}`;
  if (network.mode === 'on')
    throw new ConfigError({
      ...cap.location,
      reason: `${chosen} (from ${network.source}) is not allowed here: the network is allowed by domain only (${allowed}); list the hosts instead (network = { allow = […] } or --allow-domain HOST)`,
    });
  for (const entry of network.allow) {
    if (setting.allow.some((wide) => domainPatternCovers(wide.pattern, entry.pattern))) continue;
    throw new ConfigError({
      ...setting.allowLocation,
      reason: `network.allow entry "${entry.pattern}" (from ${entry.source}) is not allowed here: no entry of ${allowed} covers it`,
    });
  }
  network.deny = unique([
    ...setting.deny.map((entry) => ({ pattern: entry.pattern, source: formatLocation(entry.location) })),
    ...network.deny,
  ]);
  const pinned = setting.askUnknown;
  if (pinned?.value === false) {
    if (explicitAsk)
      throw new ConfigError({
        ...pinned.location,
        reason: `network.ask_unknown = true (from ${explicitAsk}) is not allowed here: network.ask_unknown = false (hosts outside the allow list are denied without a question)`,
      });
    network.askUnknown = { value: false, source: formatLocation(pinned.location) };
  }
}

function unixSockets(input: ResolveNetworkInput): UnixSocketEntry[] {
  const expand = (path: string) => expandHome(path, input.homeDir);
  const configured = input.table?.allowUnixSockets;
  const entries: UnixSocketEntry[] = unique<{ pattern: string; source: string; location?: SourceLocation }>([
    ...(configured?.value ?? []).map((path) => ({
      pattern: expand(path),
      source: formatLocation(configured!.location),
      location: configured!.location,
    })),
    ...(input.cli?.allowUnixSockets ?? []).map(({ value, flag }) => ({
      pattern: expand(value),
      source: flag,
    })),
  ]).map(({ pattern, ...rest }) => ({ path: pattern, ...rest }));
  const cap = input.requirements?.allowUnixSockets;
  if (cap) {
    const allowed = cap.values.map(expand);
    for (const entry of entries) {
      if (allowed.includes(entry.path)) continue;
      throw new ConfigError({
        ...cap.location,
        reason: `allow_unix_sockets entry "${entry.path}" (from ${entry.source}) is not allowed here: allow_unix_sockets = ${formatList(allowed)}`,
      });
    }
  }
  return entries;
}

function describeCap(setting: NetworkSetting, location: SourceLocation): NonNullable<ResolvedNetwork['cap']> {
  const source = formatLocation(location);
  if (setting.mode !== 'domains') return { mode: setting.mode, source, allow: [], deny: [] };
  return {
    mode: 'domains',
    source,
    allow: setting.allow.map((entry) => entry.pattern),
    deny: setting.deny.map((entry) => entry.pattern),
    ...(setting.askUnknown ? { askUnknown: setting.askUnknown.value } : {}),
  };
}

function capText(setting: NetworkSetting): string {
  return setting.mode === 'domains'
    ? `{ allow = ${formatList(setting.allow.map((e) => e.pattern))} }`
    : `"${setting.mode}"`;
}

/** `~` and `~/…` as the home directory; a path made canonical in form (no `.`, `..`, doubled or trailing `/`). */
export function expandHome(path: string, homeDir: string | undefined): string {
  const expanded =
    homeDir === undefined
      ? path
      : path === '~'
        ? homeDir
        : path.startsWith('~/')
          ? `${homeDir}/${path.slice(2)}`
          : path;
  if (!expanded.startsWith('/')) return expanded;
  const normalized = posix.normalize(expanded);
  return normalized.length > 1 && normalized.endsWith('/') ? normalized.slice(0, -1) : normalized;
}

function unique<T extends { pattern: string }>(entries: T[]): T[] {
  const seen = new Set<string>();
  return entries.filter((entry) => !seen.has(entry.pattern) && seen.add(entry.pattern));
}

function formatList(values: readonly string[]): string {
  return `[${values.map((value) => JSON.stringify(value)).join(', ')}]`;
}
