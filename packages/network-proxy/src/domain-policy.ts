import { NetworkProxyError } from './network-proxy-error.js';
import { type NormalizedHost, normalizeHost } from './normalize-host.js';

/**
 * Which hosts sandboxed commands may reach. Patterns: `example.org` (that name only), `*.example.org`
 * (every name below it, not `example.org` itself), an IP address (`10.0.0.5`, `::1`, `[::1]`), each
 * optionally with `:port` (`example.org:443`, `[::1]:8080`). `*` alone is accepted in `deny` only
 * (every host, listed ones too: the network off). Case and one trailing dot do not matter. `deny` wins.
 */
export interface NetworkPolicy {
  allow: readonly string[];
  deny?: readonly string[];
  /**
   * When set, the only hosts a question may be asked about (an administrator's cap on the allow list):
   * a host in neither list and outside these patterns is denied without asking (`outside_cap`), so an
   * approval can never reach past the cap.
   */
  askable?: readonly string[];
}

/** One parsed pattern. */
export interface DomainPattern {
  /** As written in the policy. */
  pattern: string;
  /** `exact`: the name or address itself; `wildcard`: names below `host`; `any`: `*`. */
  kind: 'exact' | 'wildcard' | 'any';
  /** Normalised; for a wildcard the domain after `*.`; empty for `any`. */
  host: string;
  /** The only port the pattern matches; every port when absent. */
  port?: number;
}

/** The list entry that decided a host. */
export interface DomainMatch {
  list: 'allow' | 'deny';
  pattern: DomainPattern;
}

export interface CompiledDomainPolicy {
  readonly policy: NetworkPolicy;
  /** The deny entry that matches, else the allow entry that matches, else `undefined` (unknown host). */
  match(host: NormalizedHost, port: number): DomainMatch | undefined;
  /** Whether a question may be asked about this host: always, unless `askable` is set and misses it. */
  mayAsk(host: NormalizedHost, port: number): boolean;
}

/**
 * Parses one pattern of `network.allow` or `network.deny`. Throws `NetworkProxyError`
 * (`invalid_pattern`) naming the pattern and what is wrong with it.
 */
export function parseDomainPattern(pattern: string, list: 'allow' | 'deny'): DomainPattern {
  const fail: (why: string) => never = (why) => {
    throw new NetworkProxyError({
      reason: 'invalid_pattern',
      message: `network.${list}: ${JSON.stringify(pattern)} ${why}`,
      pattern,
      list,
    });
  };
  if (typeof pattern !== 'string' || pattern.length === 0)
    fail('is empty; write a host name like "example.org"');
  if (/\s/.test(pattern)) fail('contains white space; write one host name per entry');
  if (pattern.includes('://') || pattern.includes('/')) {
    const host = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]+)/i.exec(pattern)?.[1];
    fail(`is a URL, not a host name${host ? `; write ${JSON.stringify(host)}` : ''}`);
  }
  if (pattern === '*') {
    if (list === 'deny') return { pattern, kind: 'any', host: '' };
    fail(
      'would allow every host; list the hosts sandboxed commands need, or give them the network unproxied',
    );
  }
  const { host, port } = splitPort(pattern, fail);
  if (host.startsWith('*.')) {
    const domain = host.slice(2);
    if (domain.includes('*')) fail('has more than one "*"; only a leading "*." is allowed ("*.example.org")');
    const normalized = normalizeHost(domain);
    if (normalized?.kind !== 'name') fail('needs a domain name after "*." ("*.example.org")');
    const labels = normalized.host.split('.').length;
    if (list === 'allow' && labels < 2)
      fail(`would allow every name under the top-level domain ".${normalized.host}"; name a domain below it`);
    return withPort({ pattern, kind: 'wildcard', host: normalized.host }, port);
  }
  if (host.includes('*'))
    fail('has a "*" that is not a leading "*."; write "*.example.org" for every name below it');
  const normalized = normalizeHost(host);
  if (!normalized) fail('is not a valid host name or IP address');
  return withPort({ pattern, kind: 'exact', host: normalized.host }, port);
}

function withPort(pattern: DomainPattern, port: number | undefined): DomainPattern {
  return port === undefined ? pattern : { ...pattern, port };
}

function splitPort(pattern: string, fail: (why: string) => never): { host: string; port?: number } {
  let host = pattern;
  let portText: string | undefined;
  if (pattern.startsWith('[')) {
    const close = pattern.indexOf(']');
    if (close < 0) fail('opens "[" without closing it');
    host = pattern.slice(0, close + 1);
    const rest = pattern.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) fail('has text after "]" that is not ":port"');
      portText = rest.slice(1);
    }
  } else {
    const colons = pattern.split(':').length - 1;
    // Two or more colons: an IPv6 address without brackets (and so without a port).
    if (colons === 1) {
      const at = pattern.indexOf(':');
      host = pattern.slice(0, at);
      portText = pattern.slice(at + 1);
    }
  }
  if (portText === undefined) return { host };
  const port = /^[0-9]{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
  if (!(port >= 1 && port <= 65535))
    fail(`has port ${JSON.stringify(portText)}; a port is a number from 1 to 65535`);
  return { host, port };
}

/** Validates every pattern (throwing on the first bad one) and builds the matcher. */
export function compileDomainPolicy(policy: NetworkPolicy): CompiledDomainPolicy {
  if (policy === null || typeof policy !== 'object' || !Array.isArray(policy.allow))
    throw new NetworkProxyError({
      reason: 'invalid_option',
      message: 'the network policy needs an "allow" list (an empty list allows nothing without asking)',
    });
  if (policy.deny !== undefined && !Array.isArray(policy.deny))
    throw new NetworkProxyError({
      reason: 'invalid_option',
      message: 'network.deny must be a list of patterns',
    });
  if (policy.askable !== undefined && !Array.isArray(policy.askable))
    throw new NetworkProxyError({
      reason: 'invalid_option',
      message: 'network.askable must be a list of patterns',
    });
  const allow = compileList(policy.allow.map((pattern) => parseDomainPattern(pattern, 'allow')));
  const deny = compileList((policy.deny ?? []).map((pattern) => parseDomainPattern(pattern, 'deny')));
  const askable =
    policy.askable && compileList(policy.askable.map((pattern) => parseDomainPattern(pattern, 'allow')));
  const frozen: NetworkPolicy = {
    allow: [...policy.allow],
    deny: [...(policy.deny ?? [])],
    ...(policy.askable ? { askable: [...policy.askable] } : {}),
  };
  return {
    policy: frozen,
    mayAsk: (host, port) => (askable ? askable(host, port) !== undefined : true),
    match(host, port) {
      const denied = deny(host, port);
      if (denied) return { list: 'deny', pattern: denied };
      const allowed = allow(host, port);
      if (allowed) return { list: 'allow', pattern: allowed };
      return undefined;
    },
  };
}

type ListMatcher = (host: NormalizedHost, port: number) => DomainPattern | undefined;

function compileList(patterns: DomainPattern[]): ListMatcher {
  const exact = new Map<string, DomainPattern[]>();
  const wildcard = new Map<string, DomainPattern[]>();
  const any: DomainPattern[] = [];
  for (const pattern of patterns) {
    if (pattern.kind === 'any') any.push(pattern);
    else {
      const table = pattern.kind === 'exact' ? exact : wildcard;
      const entries = table.get(pattern.host) ?? [];
      entries.push(pattern);
      table.set(pattern.host, entries);
    }
  }
  const pick = (entries: DomainPattern[] | undefined, port: number) =>
    entries?.find((entry) => entry.port === undefined || entry.port === port);
  return (host, port) => {
    const found = pick(exact.get(host.host), port);
    if (found) return found;
    // Wildcards match names only, and only below their domain: `*.example.org` is checked against
    // `example.org` for `a.example.org` and `b.a.example.org`, never for `example.org` itself.
    if (host.kind === 'name') {
      let dot = host.host.indexOf('.');
      while (dot >= 0) {
        const below = pick(wildcard.get(host.host.slice(dot + 1)), port);
        if (below) return below;
        dot = host.host.indexOf('.', dot + 1);
      }
    }
    return pick(any, port);
  };
}
