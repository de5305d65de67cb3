import type { EffectivePolicy } from '@ux/protocol';
import { memoryFsView } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { checkSeatbeltProfile } from './check-seatbelt-profile.js';
import { parseSbpl, type SbplNode } from './parse-sbpl.js';
import { planSeatbelt, type SeatbeltPlan } from './seatbelt-plan.js';

/*
 * What the network section of a generated profile means, read with a small evaluator of the SBPL
 * network subset ux writes: the last matching rule wins, as in Seatbelt; `localhost` matches the
 * loopback addresses, `*` any host or port; `ip` covers TCP and UDP, `tcp` only TCP; a unix socket is
 * matched by the path the kernel reports (canonical). It cannot say what macOS does; it says what the
 * profile text means under that model, and it fails on the old network-on profile, which allowed
 * every unix socket.
 */

type Endpoint = { kind: 'tcp' | 'udp'; host: string; port: number } | { kind: 'unix'; path: string };

type Query =
  | { operation: 'network-outbound'; remote: Endpoint }
  | { operation: 'network-inbound' | 'network-bind'; local: Endpoint }
  | { operation: 'system-socket'; domain: string; protocol?: number }
  | { operation: 'mach-lookup'; name: string };

const LOOPBACK = new Set(['localhost', '127.0.0.1', '::1']);

function evaluateNetwork(profile: string, parameters: readonly [string, string][], query: Query) {
  const values = new Map(parameters);
  const head = (node: SbplNode) =>
    node.type === 'list' && node.items[0]?.type === 'symbol' ? node.items[0].value : undefined;
  const argument = (node: SbplNode | undefined): string => {
    if (node?.type === 'string') return node.value;
    if (node?.type === 'list' && head(node) === 'param' && node.items[1]?.type === 'string') {
      const value = values.get(node.items[1].value);
      if (value === undefined) throw new Error(`parameter ${node.items[1].value} has no value`);
      return value;
    }
    throw new Error(`cannot evaluate argument ${JSON.stringify(node)}`);
  };
  const endpointMatches = (filter: SbplNode[], endpoint: Endpoint | undefined): boolean => {
    if (endpoint === undefined) throw new Error('this rule needs an endpoint the query does not have');
    const [family, spec] = filter;
    const familyName = family?.type === 'symbol' ? family.value : undefined;
    if (familyName === 'unix-socket') {
      if (endpoint.kind !== 'unix') return false;
      if (spec === undefined) return true;
      if (spec.type === 'list' && head(spec) === 'path-literal')
        return endpoint.path === argument(spec.items[1]);
      throw new Error(`the evaluator does not know unix-socket filter ${JSON.stringify(spec)}`);
    }
    if (familyName !== 'ip' && familyName !== 'tcp') throw new Error(`unknown address family ${familyName}`);
    if (endpoint.kind === 'unix' || (familyName === 'tcp' && endpoint.kind !== 'tcp')) return false;
    const [host, port] = argument(spec).split(':');
    const hostMatches = host === '*' || (host === 'localhost' && LOOPBACK.has(endpoint.host));
    return hostMatches && (port === '*' || Number(port) === endpoint.port);
  };
  const matches = (filter: SbplNode): boolean => {
    if (filter.type !== 'list') throw new Error(`not a filter: ${JSON.stringify(filter)}`);
    const [, ...args] = filter.items;
    switch (head(filter)) {
      case 'require-all':
        return args.every(matches);
      case 'require-any':
        return args.some(matches);
      case 'require-not':
        return !matches(args[0]!);
      case 'remote':
        return endpointMatches(args, 'remote' in query ? query.remote : undefined);
      case 'local':
        return endpointMatches(args, 'local' in query ? query.local : undefined);
      case 'socket-domain':
        return 'domain' in query && args[0]?.type === 'symbol' && args[0].value === query.domain;
      case 'socket-protocol':
        return 'domain' in query && args[0]?.type === 'number' && args[0].value === query.protocol;
      case 'global-name':
        return 'name' in query && argument(args[0]) === query.name;
      case 'local-name':
        return false;
      default:
        throw new Error(`the evaluator does not know filter ${head(filter)}`);
    }
  };
  const covers = (operation: string) =>
    operation === 'default' ||
    operation === query.operation ||
    (operation.endsWith('*') && query.operation.startsWith(operation.slice(0, -1)));

  let decision: 'allow' | 'deny' | undefined;
  for (const form of parseSbpl(profile)) {
    const action = head(form);
    if (action === 'version' || form.type !== 'list') continue;
    const rest = form.items.slice(1);
    const operations = rest.flatMap((item) => (item.type === 'symbol' ? [item.value] : []));
    if (!operations.some(covers)) continue;
    const filters = rest.filter((item) => item.type === 'list' && head(item) !== 'with');
    if (filters.length === 0 || filters.some(matches)) decision = action as 'allow' | 'deny';
  }
  if (decision === undefined) throw new Error('the profile decides nothing (no deny default?)');
  return decision;
}

const fs = memoryFsView({
  '/w/': '',
  '/var': '-> private/var',
  '/tmp': '-> private/tmp',
  '/private/var/run/docker.sock': '-> /Users/me/.docker/run/docker.sock',
  '/Users/me/.docker/run/docker.sock': '',
  '/private/tmp/agent/ssh.sock': '',
});
const PROXY = { unixSocket: '/Users/me/.ux/proxy.sock', loopbackPort: 43128 };

function plan(network: EffectivePolicy['network'], allowUnixSockets?: string[]): SeatbeltPlan {
  const result = planSeatbelt(
    {
      argv: ['/bin/sh', '-c', 'true'],
      cwd: '/w',
      env: { PATH: '/usr/bin:/bin' },
      tty: false,
      policy: {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'cwd' }, access: 'write' },
          ],
        },
        network,
        ...(network === 'proxied' ? { networkProxy: PROXY } : {}),
        ...(allowUnixSockets ? { allowUnixSockets } : {}),
      },
    },
    { fs, hostEnv: {} },
  );
  expect(checkSeatbeltProfile(result.profile, result.parameters)).toEqual([]);
  return result;
}

const ask = (p: SeatbeltPlan, query: Query) => evaluateNetwork(p.profile, p.parameters, query);
const out = (remote: Endpoint): Query => ({ operation: 'network-outbound', remote });
const tcp = (host: string, port: number): Endpoint => ({ kind: 'tcp', host, port });
const udp = (host: string, port: number): Endpoint => ({ kind: 'udp', host, port });
const unix = (path: string): Endpoint => ({ kind: 'unix', path });

const DOCKER = '/Users/me/.docker/run/docker.sock';
const AGENT = '/private/tmp/agent/ssh.sock';
const MDNS = '/private/var/run/mDNSResponder';

describe('the Seatbelt network section, as the profile text reads', () => {
  it('restricted: nothing, not even a unix socket or DNS', () => {
    const p = plan('restricted');
    for (const remote of [
      tcp('93.184.216.34', 443),
      tcp('127.0.0.1', 43128),
      udp('*', 53),
      unix(DOCKER),
      unix(MDNS),
    ]) {
      expect(ask(p, out(remote)), JSON.stringify(remote)).toBe('deny');
    }
    expect(ask(p, { operation: 'network-bind', local: tcp('127.0.0.1', 8080) })).toBe('deny');
    expect(ask(p, { operation: 'system-socket', domain: 'AF_UNIX' })).toBe('deny');
    // The base policy's kernel-control socket is not network access and stays.
    expect(ask(p, { operation: 'system-socket', domain: 'AF_SYSTEM', protocol: 2 })).toBe('allow');
  });

  it('restricted with listed unix sockets: those, by their canonical path, and nothing else', () => {
    const p = plan('restricted', ['/var/run/docker.sock', '/tmp/agent/ssh.sock']);
    expect(ask(p, out(unix(DOCKER)))).toBe('allow');
    expect(ask(p, out(unix(AGENT)))).toBe('allow');
    expect(ask(p, { operation: 'system-socket', domain: 'AF_UNIX' })).toBe('allow');
    for (const remote of [unix('/private/tmp/agent/other.sock'), unix(MDNS), tcp('127.0.0.1', 80)]) {
      expect(ask(p, out(remote)), JSON.stringify(remote)).toBe('deny');
    }
    // Connect only: the command cannot bind (impersonate) a listed socket.
    expect(ask(p, { operation: 'network-bind', local: unix(AGENT) })).toBe('deny');
  });

  it('proxied: TCP to the proxy port on loopback only', () => {
    const p = plan('proxied');
    expect(ask(p, out(tcp('127.0.0.1', 43128)))).toBe('allow');
    expect(ask(p, out(tcp('::1', 43128)))).toBe('allow');
    for (const remote of [
      tcp('127.0.0.1', 43129),
      tcp('93.184.216.34', 43128),
      tcp('93.184.216.34', 443),
      udp('127.0.0.1', 43128),
      udp('192.168.1.1', 53),
      unix(MDNS),
      unix(DOCKER),
    ]) {
      expect(ask(p, out(remote)), JSON.stringify(remote)).toBe('deny');
    }
    expect(ask(p, { operation: 'network-inbound', local: tcp('127.0.0.1', 43128) })).toBe('deny');
    expect(ask(p, { operation: 'network-bind', local: tcp('127.0.0.1', 43128) })).toBe('deny');
    expect(ask(p, { operation: 'system-socket', domain: 'AF_UNIX' })).toBe('deny');
    // No DNS through the system resolver's services either: the proxy resolves names.
    for (const name of ['com.apple.dnssd.service', 'com.apple.SystemConfiguration.DNSConfiguration']) {
      expect(ask(p, { operation: 'mach-lookup', name })).toBe('deny');
    }
  });

  it('proxied with a listed unix socket: the proxy port and that socket', () => {
    const p = plan('proxied', ['/tmp/agent/ssh.sock']);
    expect(ask(p, out(tcp('127.0.0.1', 43128)))).toBe('allow');
    expect(ask(p, out(unix(AGENT)))).toBe('allow');
    expect(ask(p, out(unix(DOCKER)))).toBe('deny');
    expect(ask(p, out(tcp('93.184.216.34', 443)))).toBe('deny');
  });

  it('enabled: IP anywhere both ways and DNS, but no unix socket beyond mDNSResponder and the listed ones', () => {
    const p = plan('enabled', ['/tmp/agent/ssh.sock']);
    for (const remote of [
      tcp('93.184.216.34', 443),
      udp('192.168.1.1', 53),
      tcp('::1', 5432),
      unix(MDNS),
      unix(AGENT),
    ]) {
      expect(ask(p, out(remote)), JSON.stringify(remote)).toBe('allow');
    }
    expect(ask(p, { operation: 'network-inbound', local: tcp('0.0.0.0', 8080) })).toBe('allow');
    expect(ask(p, { operation: 'network-bind', local: tcp('0.0.0.0', 8080) })).toBe('allow');
    expect(ask(p, { operation: 'mach-lookup', name: 'com.apple.dnssd.service' })).toBe('allow');
    for (const remote of [unix(DOCKER), unix('/private/tmp/tmux-501/default')]) {
      expect(ask(p, out(remote)), JSON.stringify(remote)).toBe('deny');
    }
    expect(ask(p, { operation: 'network-bind', local: unix('/private/tmp/x.sock') })).toBe('deny');
    expect(ask(plan('enabled'), out(unix(AGENT)))).toBe('deny');
  });

  it('the evaluator tells the difference: the old network-on rule allowed every unix socket', () => {
    const old = '(version 1)\n(deny default)\n(allow network*)\n';
    expect(evaluateNetwork(old, [], out(unix(DOCKER)))).toBe('allow');
    expect(ask(plan('enabled'), out(unix(DOCKER)))).toBe('deny');
  });
});
