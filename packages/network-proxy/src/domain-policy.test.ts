import { describe, expect, it } from 'vitest';
import { compileDomainPolicy, parseDomainPattern } from './domain-policy.js';
import { NetworkProxyError } from './network-proxy-error.js';
import { normalizeHost } from './normalize-host.js';

function decide(policy: { allow: string[]; deny?: string[] }, host: string, port = 443) {
  const normalized = normalizeHost(host);
  if (!normalized) throw new Error(`test host ${host} is not valid`);
  const match = compileDomainPolicy(policy).match(normalized, port);
  return match ? `${match.list}:${match.pattern.pattern}` : 'unknown';
}

describe('normalizeHost', () => {
  it.each([
    ['Example.ORG', 'example.org', 'name'],
    ['example.org.', 'example.org', 'name'],
    ['bücher.de', 'xn--bcher-kva.de', 'name'],
    ['_srv.example.org', '_srv.example.org', 'name'],
    ['localhost', 'localhost', 'name'],
    ['127.0.0.1', '127.0.0.1', 'ipv4'],
    ['127.1', '127.0.0.1', 'ipv4'],
    ['0x7f.0.0.1', '127.0.0.1', 'ipv4'],
    ['2130706433', '127.0.0.1', 'ipv4'],
    ['0177.0.0.1', '127.0.0.1', 'ipv4'],
    ['[::1]', '::1', 'ipv6'],
    ['0:0:0:0:0:0:0:1', '::1', 'ipv6'],
    ['2001:DB8::1', '2001:db8::1', 'ipv6'],
    ['::ffff:10.0.0.1', '10.0.0.1', 'ipv4'],
    ['[::ffff:7f00:1]', '127.0.0.1', 'ipv4'],
  ] as const)('%s → %s (%s)', (input, host, kind) => {
    expect(normalizeHost(input)).toEqual({ host, kind });
  });

  it.each([
    '',
    '.',
    'a..b',
    '.example.org',
    'example.org..',
    'exa mple.org',
    'user@example.org',
    'example.org/path',
    'example.org:80',
    '-bad.example.org',
    'bad-.example.org',
    `${'a'.repeat(64)}.example.org`,
    'foo.123',
    '1.2.3.256',
    'fe80::1%eth0',
    '[example.org]',
    'ex\u0000ample.org',
  ])('refuses %j', (input) => {
    expect(normalizeHost(input)).toBeUndefined();
  });
});

describe('domain patterns', () => {
  it('an exact name matches itself only, whatever the case and a trailing dot', () => {
    const policy = { allow: ['Example.org.'] };
    expect(decide(policy, 'example.org')).toBe('allow:Example.org.');
    expect(decide(policy, 'EXAMPLE.ORG.')).toBe('allow:Example.org.');
    expect(decide(policy, 'www.example.org')).toBe('unknown');
    expect(decide(policy, 'example.org.evil.test')).toBe('unknown');
    expect(decide(policy, 'notexample.org')).toBe('unknown');
  });

  it('*.domain matches every name below the domain, not the domain itself', () => {
    const policy = { allow: ['*.example.org'] };
    expect(decide(policy, 'api.example.org')).toBe('allow:*.example.org');
    expect(decide(policy, 'a.b.c.example.org')).toBe('allow:*.example.org');
    expect(decide(policy, 'example.org')).toBe('unknown');
    expect(decide(policy, 'badexample.org')).toBe('unknown');
    expect(decide(policy, 'example.org.evil.test')).toBe('unknown');
  });

  it('deny wins over allow, for exact names and wildcards alike', () => {
    const policy = {
      allow: ['*.example.org', 'example.org'],
      deny: ['secret.example.org', '*.internal.example.org'],
    };
    expect(decide(policy, 'example.org')).toBe('allow:example.org');
    expect(decide(policy, 'www.example.org')).toBe('allow:*.example.org');
    expect(decide(policy, 'secret.example.org')).toBe('deny:secret.example.org');
    expect(decide(policy, 'db.internal.example.org')).toBe('deny:*.internal.example.org');
    // The wildcard's apex is not denied by it.
    expect(decide(policy, 'internal.example.org')).toBe('allow:*.example.org');
  });

  it('a bare * in deny refuses every host, listed ones too', () => {
    const policy = { allow: ['example.org'], deny: ['*'] };
    expect(decide(policy, 'example.org')).toBe('deny:*');
    expect(decide(policy, '10.0.0.1')).toBe('deny:*');
  });

  it('IP addresses match only themselves: wildcards never match an address', () => {
    const policy = { allow: ['10.0.0.5', '*.example.org', '::1'] };
    expect(decide(policy, '10.0.0.5')).toBe('allow:10.0.0.5');
    expect(decide(policy, '10.0.0.6')).toBe('unknown');
    expect(decide(policy, '167772165')).toBe('allow:10.0.0.5'); // 10.0.0.5 spelled as one number
    expect(decide(policy, '[::1]')).toBe('allow:::1');
    expect(decide(policy, '::ffff:10.0.0.5')).toBe('allow:10.0.0.5');
  });

  it('a port narrows a pattern to that port', () => {
    const policy = {
      allow: ['example.org:443', '*.example.net:8443', '[::1]:8080'],
      deny: ['example.org:25'],
    };
    expect(decide(policy, 'example.org', 443)).toBe('allow:example.org:443');
    expect(decide(policy, 'example.org', 80)).toBe('unknown');
    expect(decide(policy, 'example.org', 25)).toBe('deny:example.org:25');
    expect(decide(policy, 'a.example.net', 8443)).toBe('allow:*.example.net:8443');
    expect(decide(policy, 'a.example.net', 443)).toBe('unknown');
    expect(decide(policy, '::1', 8080)).toBe('allow:[::1]:8080');
  });

  it('parses patterns into their parts', () => {
    expect(parseDomainPattern('*.Example.ORG:443', 'allow')).toEqual({
      pattern: '*.Example.ORG:443',
      kind: 'wildcard',
      host: 'example.org',
      port: 443,
    });
    expect(parseDomainPattern('*.local', 'deny')).toEqual({
      pattern: '*.local',
      kind: 'wildcard',
      host: 'local',
    });
  });

  it.each([
    ['', 'allow', 'is empty'],
    ['*', 'allow', 'would allow every host'],
    ['https://example.org/path', 'allow', 'is a URL, not a host name; write "example.org"'],
    ['example.org/path', 'allow', 'is a URL'],
    ['exa mple.org', 'deny', 'contains white space'],
    ['foo..bar', 'allow', 'is not a valid host name or IP address'],
    ['ex*ample.org', 'allow', 'has a "*" that is not a leading "*."'],
    ['*.*.example.org', 'allow', 'has more than one "*"'],
    ['*.com', 'allow', 'would allow every name under the top-level domain ".com"'],
    ['*.10.0.0.1', 'allow', 'needs a domain name after "*."'],
    ['example.org:0', 'allow', 'has port "0"'],
    ['example.org:http', 'deny', 'has port "http"'],
    ['[::1', 'allow', 'opens "[" without closing it'],
  ] as const)('refuses %j in network.%s: %s', (pattern, list, why) => {
    let error: unknown;
    try {
      parseDomainPattern(pattern, list);
    } catch (caught) {
      error = caught;
    }
    expect(NetworkProxyError.isInstance(error)).toBe(true);
    const failure = error as NetworkProxyError;
    expect(failure.reason).toBe('invalid_pattern');
    expect(failure.code).toBe('config_error');
    expect(failure.pattern).toBe(pattern);
    expect(failure.list).toBe(list);
    expect(failure.message).toContain(`network.${list}: ${JSON.stringify(pattern)}`);
    expect(failure.message).toContain(why);
  });

  it('compiling a policy names its first bad pattern', () => {
    expect(() => compileDomainPolicy({ allow: ['example.org'], deny: ['ok.test', 'bad..test'] })).toThrow(
      'network.deny: "bad..test" is not a valid host name or IP address',
    );
    expect(() => compileDomainPolicy({} as never)).toThrow('needs an "allow" list');
  });
});
