import { describe, expect, it } from 'vitest';
import { checkSeatbeltProfile } from './check-seatbelt-profile.js';
import { parseSbpl, SbplSyntaxError } from './parse-sbpl.js';
import {
  SEATBELT_BASE_POLICY,
  SEATBELT_NETWORK_POLICY,
  SEATBELT_PLATFORM_DEFAULTS_POLICY,
  SEATBELT_PTY_POLICY,
} from './seatbelt-base-policy.js';

const HEADER = '(version 1)\n(deny default)\n';
const ROOT: [string, string][] = [['WRITABLE_ROOT_0', '/w']];

describe('parseSbpl', () => {
  it('reads lists, symbols, numbers, strings and regex literals, skipping comments', () => {
    const [form] = parseSbpl(
      '; comment\n(allow file-read* (literal "/a b") (regex #"^/x\\.y$") 2) ; trailing',
    );
    expect(form).toMatchObject({
      type: 'list',
      items: [
        { type: 'symbol', value: 'allow' },
        { type: 'symbol', value: 'file-read*' },
        {
          type: 'list',
          items: [
            { type: 'symbol', value: 'literal' },
            { type: 'string', value: '/a b', regex: false },
          ],
        },
        {
          type: 'list',
          items: [
            { type: 'symbol', value: 'regex' },
            { type: 'string', value: '^/x\\.y$', regex: true },
          ],
        },
        { type: 'number', value: 2 },
      ],
    });
  });

  it('reports unbalanced parentheses and unterminated strings with the line', () => {
    expect(() => parseSbpl('(version 1)\n(allow file-read*')).toThrow(SbplSyntaxError);
    expect(() => parseSbpl('(version 1)\n(allow file-read*')).toThrow(/line 2: unclosed/);
    expect(() => parseSbpl('(version 1))')).toThrow(/unexpected "\)"/);
    expect(() => parseSbpl('(literal "/x)')).toThrow(/unterminated string/);
  });
});

describe('checkSeatbeltProfile', () => {
  it('accepts every fixed section ux writes', () => {
    const text = [
      HEADER,
      SEATBELT_BASE_POLICY,
      SEATBELT_PTY_POLICY,
      SEATBELT_PLATFORM_DEFAULTS_POLICY,
      SEATBELT_NETWORK_POLICY,
    ].join('\n');
    expect(checkSeatbeltProfile(text, [])).toEqual([]);
  });

  it('accepts a write rule with parameters and exclusions', () => {
    const text = `${HEADER}(allow file-write* (require-all (subpath (param "WRITABLE_ROOT_0")) (require-not (literal (param "X_0")))))`;
    expect(checkSeatbeltProfile(text, [...ROOT, ['X_0', '/w/.git']])).toEqual([]);
  });

  it('accepts the case-insensitive exclusions and move guards: a root parameter plus a regex below it', () => {
    const text = [
      HEADER,
      '(allow file-write*',
      '  (require-all (subpath (param "WRITABLE_ROOT_0"))',
      '    (require-not (regex #"^/[^/]+/[.][gG][iI][tT]/[cC][oO][nN][fF][iI][gG]$"))',
      '    (require-not (regex #"^/[^/]+/[.][cC][oO][dD][eE][xX](/|$)"))))',
      '(deny file-write-unlink file-write-create',
      '  (require-all (subpath (param "WRITABLE_ROOT_0"))',
      '    (require-any',
      '      (regex #"^/[^/]+$")',
      '      (regex #"^/[^/]+/[.][gG][iI][tT]$"))))',
    ].join('\n');
    expect(checkSeatbeltProfile(text, ROOT)).toEqual([]);
  });

  it('accepts the network rules: ip and tcp addresses, from a literal or a parameter, and unix socket paths', () => {
    const text = [
      HEADER,
      '(allow network-outbound (remote tcp (param "PROXY_LOOPBACK_ADDRESS")))',
      '(allow network-outbound (remote ip "*:*"))',
      '(allow network-inbound (local ip "localhost:*"))',
      '(allow system-socket (socket-domain AF_UNIX))',
      '(allow network-outbound (remote unix-socket (path-literal (param "UNIX_SOCKET_PATH_0"))))',
      '(allow network-outbound (remote unix-socket))',
    ].join('\n');
    expect(
      checkSeatbeltProfile(text, [
        ['PROXY_LOOPBACK_ADDRESS', 'localhost:43128'],
        ['UNIX_SOCKET_PATH_0', '/private/tmp/agent.sock'],
      ]),
    ).toEqual([]);
  });

  it('checks an address parameter by its value', () => {
    const rule = `${HEADER}(allow network-outbound (remote tcp (param "P")))`;
    for (const value of ['example.com:443', 'localhost:0', 'localhost:65536', 'localhost', '127.0.0.1:80']) {
      expect(checkSeatbeltProfile(rule, [['P', value]]).join('\n')).toContain(
        `address ${JSON.stringify(value)} is not localhost:PORT, *:PORT or *:*`,
      );
    }
    expect(checkSeatbeltProfile(rule, [['P', 'localhost:65535']])).toEqual([]);
  });

  const rejects: [string, string, RegExp][] = [
    [
      'a host Seatbelt cannot match',
      '(allow network-outbound (remote ip "example.com:443"))',
      /address "example.com:443" is not localhost:PORT/,
    ],
    [
      'an address family ux does not write',
      '(allow network-outbound (remote udp "*:53"))',
      /expected ip, tcp or unix-socket/,
    ],
    ['an address without host:port', '(allow network-outbound (remote ip))', /takes one "host:port"/],
    [
      'a file filter on a unix socket',
      '(allow network-outbound (remote unix-socket (subpath "/tmp")))',
      /filter subpath does not apply to a unix socket/,
    ],
    [
      'a unix socket path on a file operation',
      '(allow file-read* (path-literal "/tmp/x"))',
      /filter path-literal does not apply to file-read\*/,
    ],
    [
      'an unanchored regex',
      '(allow file-write* (require-not (regex #"[.][gG][iI][tT]$")))',
      /"\[\.\]\[gG\]\[iI\]\[tT\]\$" is not anchored with \^/,
    ],
    ['a misspelt operation', '(allow file-wirte* (subpath "/w"))', /unknown operation file-wirte\*/],
    ['a misspelt filter', '(allow file-read* (subpth "/w"))', /unknown filter subpth/],
    [
      'a filter of the wrong kind',
      '(allow mach-lookup (subpath "/w"))',
      /filter subpath does not apply to mach-lookup/,
    ],
    [
      'a filter on an operation that takes none',
      '(allow process-fork (literal "/bin/sh"))',
      /takes no filter/,
    ],
    ['(allow default)', '(allow default)', /turn the sandbox off/],
    ['an undefined parameter', '(allow file-read* (subpath (param "NOPE")))', /NOPE is not defined/],
    ['a filter with two arguments', '(allow file-read* (literal "/a" "/b"))', /takes one argument/],
    ['an unknown vnode type', '(allow file-read* (vnode-type DIRECTROY))', /unknown vnode-type/],
    [
      'a regex where a string belongs',
      '(allow mach-lookup (global-name #"x"))',
      /expected a "string" literal/,
    ],
    ['an invalid regex', '(deny file-read* (regex #"^/(a"))', /invalid regular expression/],
    ['a 901-byte literal', `(allow file-read* (literal "/${'a'.repeat(900)}"))`, /901 bytes is over 900/],
    [
      'an unknown modifier',
      '(allow process-exec (literal "/bin/ps") (with sandbox))',
      /unknown \(with …\) modifier/,
    ],
    [
      'no-sandbox off process-exec',
      '(allow file-read* (literal "/x") (with no-sandbox))',
      /only on allow process-exec/,
    ],
    ['an unknown top-level form', '(import "system.sb")', /unknown top-level form import/],
    [
      'a require-not with two filters',
      '(allow file-read* (require-not (literal "/a") (literal "/b")))',
      /require-not has 2 filters/,
    ],
    [
      'an operation after a filter',
      '(allow file-read* (literal "/a") file-write*)',
      /operations must come before filters/,
    ],
  ];
  for (const [what, rule, message] of rejects) {
    it(`rejects ${what}`, () => {
      const problems = checkSeatbeltProfile(`${HEADER}${rule}`, []);
      expect(problems.join('\n')).toMatch(message);
      expect(problems[0]).toMatch(/^line 3: /);
    });
  }

  it('requires (version 1) then (deny default) first', () => {
    expect(checkSeatbeltProfile('(deny default)\n(version 1)', [])).toEqual(
      expect.arrayContaining([
        'the profile must start with (version 1)',
        'the second form must be (deny default)',
      ]),
    );
  });

  it('reports unused and duplicated parameters', () => {
    expect(checkSeatbeltProfile(HEADER, [...ROOT, ...ROOT])).toEqual([
      'parameter WRITABLE_ROOT_0 is defined 2 times',
      'parameter WRITABLE_ROOT_0 is never used',
    ]);
  });

  it('turns a syntax error into a problem', () => {
    expect(checkSeatbeltProfile(`${HEADER}(allow file-read*`, [])).toEqual(['line 3: unclosed "("']);
  });
});
