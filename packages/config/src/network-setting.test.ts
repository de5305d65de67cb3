import { ConfigError, UxError } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { applyConfigOverrides } from './apply-config-overrides.js';
import { domainPatternCovers, domainPatternProblem, unixSocketProblem } from './network-setting.js';
import { parseConfigOverride } from './parse-config-override.js';
import { parseRequirements } from './requirements.js';
import { type ResolveSessionInput, resolveSessionSettings } from './resolve-session-settings.js';
import { parseTomlDocument } from './toml-document.js';
import { parseUserConfig } from './user-config.js';

const FILE = '/home/dev/.ux/config.toml';
const REQ = '/etc/ux/requirements.toml';
const HOME = '/home/dev';

const userConfig = (text: string) => parseUserConfig(parseTomlDocument(text, FILE));
const requirements = (text: string) => parseRequirements(parseTomlDocument(text, REQ));
const withOverrides = (text: string, ...args: string[]) =>
  parseUserConfig(applyConfigOverrides(parseTomlDocument(text, FILE), args.map(parseConfigOverride), FILE));

function errorOf(run: () => unknown): Error {
  try {
    run();
  } catch (error) {
    if (UxError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected an error');
}

const resolve = (input: ResolveSessionInput) => resolveSessionSettings({ homeDir: HOME, ...input });
const flag = (name: string, value: string) => ({ value, flag: `${name} ${value}` });

describe('network in config.toml', () => {
  it('reads "off", "on", an allow/deny table and the legacy network_access', () => {
    expect(
      userConfig('[sandbox_workspace_write]\nnetwork = "off"\n').session.workspaceWrite?.value,
    ).toMatchObject({
      network: { value: { mode: 'off' }, location: { file: FILE, line: 2, column: 1 } },
      networkAccess: false,
    });
    expect(
      userConfig('[sandbox_workspace_write]\nnetwork = "on"\n').session.workspaceWrite?.value,
    ).toMatchObject({
      network: { value: { mode: 'on' } },
      networkAccess: true,
    });
    expect(
      userConfig('[sandbox_workspace_write]\nnetwork_access = false\n').session.workspaceWrite?.value.network,
    ).toEqual({ value: { mode: 'off' }, location: { file: FILE, line: 2, column: 1 } });
    const listed = userConfig(
      '[sandbox_workspace_write]\nnetwork = { allow = ["github.com", "*.example.org"], deny = ["gist.github.com"], ask_unknown = false }\n',
    ).session.workspaceWrite?.value.network?.value;
    expect(listed).toEqual({
      mode: 'domains',
      allow: [
        { pattern: 'github.com', location: { file: FILE, line: 2, column: 22 } },
        { pattern: '*.example.org', location: { file: FILE, line: 2, column: 36 } },
      ],
      deny: [{ pattern: 'gist.github.com', location: { file: FILE, line: 2, column: 62 } }],
      askUnknown: { value: false, location: { file: FILE, line: 2, column: 82 } },
      allowLocation: { file: FILE, line: 2, column: 13 },
    });
  });

  it('reads the table form [sandbox_workspace_write.network] and an empty table (ask about every host)', () => {
    const table = userConfig('[sandbox_workspace_write.network]\nallow = ["pypi.org"]\n').session
      .workspaceWrite?.value.network;
    expect(table?.value).toMatchObject({ mode: 'domains', allow: [{ pattern: 'pypi.org' }], deny: [] });
    expect(table?.location).toEqual({ file: FILE, line: 1, column: 2 });
    expect(
      userConfig('[sandbox_workspace_write]\nnetwork = {}\n').session.workspaceWrite?.value.network?.value,
    ).toEqual({
      mode: 'domains',
      allow: [],
      deny: [],
      allowLocation: { file: FILE, line: 2, column: 1 },
    });
  });

  it('reads [sandbox_read_only] network and allow_unix_sockets, and allow_unix_sockets in workspace-write', () => {
    const config = userConfig(
      '[sandbox_read_only]\nnetwork = { allow = ["github.com"] }\nallow_unix_sockets = ["~/agent.sock"]\n[sandbox_workspace_write]\nallow_unix_sockets = ["/run/user/1000/ssh-agent.sock"]\n',
    );
    expect(config.session.readOnly?.value).toMatchObject({
      network: { value: { mode: 'domains', allow: [{ pattern: 'github.com' }] } },
      allowUnixSockets: { value: ['~/agent.sock'], location: { file: FILE, line: 3, column: 1 } },
    });
    expect(config.session.workspaceWrite?.value.allowUnixSockets?.value).toEqual([
      '/run/user/1000/ssh-agent.sock',
    ]);
  });

  it.each([
    [
      '[sandbox_workspace_write]\nnetwork = "of"',
      `${FILE}:2:1: sandbox_workspace_write.network must be "off", "on" or a table { allow = […], deny = […] }, got "of" (did you mean "off" or "on"?)`,
    ],
    [
      '[sandbox_read_only]\nnetwork = false',
      `${FILE}:2:1: sandbox_read_only.network must be "off", "on" or a table { allow = […], deny = […] }, got false; write "off"`,
    ],
    [
      '[sandbox_workspace_write]\nnetwork = { allow = ["https://github.com/"] }',
      `${FILE}:2:22: sandbox_workspace_write.network.allow[0]: "https://github.com/" is a URL, not a host name; write "github.com"`,
    ],
    [
      '[sandbox_workspace_write]\nnetwork = { allow = ["ok.org", "*"] }',
      `${FILE}:2:32: sandbox_workspace_write.network.allow[1]: "*" would allow every host; list the hosts sandboxed commands need, or give them the network unproxied`,
    ],
    [
      '[sandbox_workspace_write]\nnetwork = { allow = ["*.com"] }',
      `${FILE}:2:22: sandbox_workspace_write.network.allow[0]: "*.com" would allow every name under the top-level domain ".com"; name a domain below it`,
    ],
    [
      '[sandbox_workspace_write]\nnetwork = { deny = ["a.org:99999"] }',
      `${FILE}:2:21: sandbox_workspace_write.network.deny[0]: "a.org:99999" has port "99999"; a port is a number from 1 to 65535`,
    ],
    [
      '[sandbox_workspace_write]\nnetwork = { alow = ["a.org"] }',
      `${FILE}:2:13: unknown key sandbox_workspace_write.network.alow (did you mean "allow"?)`,
    ],
    [
      '[sandbox_workspace_write]\nnetwork = { allow = "a.org" }',
      `${FILE}:2:13: sandbox_workspace_write.network.allow must be an array of host patterns ("example.org", "*.example.org"), got "a.org"`,
    ],
    [
      '[sandbox_workspace_write]\nnetwork = { allow = [3] }',
      `${FILE}:2:22: sandbox_workspace_write.network.allow[0] must be a string, got 3`,
    ],
    [
      '[sandbox_workspace_write]\nnetwork = { ask_unknown = "no" }',
      `${FILE}:2:13: sandbox_workspace_write.network.ask_unknown must be true or false, got "no"`,
    ],
    [
      '[sandbox_workspace_write]\nnetwork_access = true\nnetwork = "on"',
      `${FILE}:3:1: sandbox_workspace_write.network and sandbox_workspace_write.network_access (its legacy spelling, at ${FILE}:2:1) are both set; keep network`,
    ],
    [
      '[sandbox_read_only]\nnetwork_access = true',
      `${FILE}:2:1: unknown key sandbox_read_only.network_access (did you mean "network"?)`,
    ],
    ['sandbox_read_only = 1', `${FILE}:1:1: sandbox_read_only must be a table`],
    [
      '[sandbox_workspace_write]\nallow_unix_sockets = ["agent.sock"]',
      `${FILE}:2:23: sandbox_workspace_write.allow_unix_sockets[0]: "agent.sock" must be an absolute path (or ~/…): a socket is named the same from every directory`,
    ],
    [
      '[sandbox_read_only]\nallow_unix_sockets = ["~root/agent.sock"]',
      `${FILE}:2:23: sandbox_read_only.allow_unix_sockets[0]: "~root/agent.sock": only ~ and ~/… are expanded (to the home directory); write the path out`,
    ],
    [
      '[sandbox_read_only]\nallow_unix_sockets = "/run/a.sock"',
      `${FILE}:2:1: sandbox_read_only.allow_unix_sockets must be an array of socket paths, got "/run/a.sock"`,
    ],
  ])('refuses %j', (text, message) => {
    const error = errorOf(() => userConfig(text));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(error.message).toBe(message);
  });

  it('lets a -c override of one spelling replace the other written in the file', () => {
    const file = '[sandbox_workspace_write]\nnetwork_access = true\n';
    expect(
      withOverrides(file, 'sandbox_workspace_write.network={allow=["a.org"]}').session.workspaceWrite?.value,
    ).toMatchObject({
      networkAccess: false,
      network: {
        value: { mode: 'domains', allow: [{ pattern: 'a.org' }] },
        location: { file: '-c sandbox_workspace_write.network={allow=["a.org"]}' },
      },
    });
    expect(
      withOverrides(
        '[sandbox_workspace_write]\nnetwork = "on"\n',
        'sandbox_workspace_write.network_access=false',
      ).session.workspaceWrite?.value.network?.value,
    ).toEqual({ mode: 'off' });
    expect(errorOf(() => withOverrides(file, 'sandbox_workspace_write.network=of')).message).toBe(
      '-c sandbox_workspace_write.network=of: sandbox_workspace_write.network must be "off", "on" or a table { allow = […], deny = […] }, got "of" (did you mean "off" or "on"?)',
    );
  });
});

describe('network in the requirements', () => {
  it('reads "off", "on", a [network] table with ask_unknown, and allow_unix_sockets', () => {
    expect(requirements('network = "off"\n').network).toEqual({
      value: { mode: 'off' },
      location: { file: REQ, line: 1, column: 1 },
    });
    const listed = requirements(
      'allow_unix_sockets = ["/run/docker.sock"]\n[network]\nallow = ["*.corp.example"]\ndeny = ["secret.corp.example"]\nask_unknown = false\n',
    );
    expect(listed.network?.value).toMatchObject({
      mode: 'domains',
      allow: [{ pattern: '*.corp.example', location: { file: REQ, line: 3, column: 10 } }],
      deny: [{ pattern: 'secret.corp.example' }],
      askUnknown: { value: false, location: { file: REQ, line: 5, column: 1 } },
    });
    expect(listed.allowUnixSockets).toEqual({
      values: ['/run/docker.sock'],
      location: { file: REQ, line: 1, column: 1 },
    });
  });

  it.each([
    [
      'network = "maybe"',
      `${REQ}:1:1: network must be "off", "on" or a table { allow = […], deny = […] }, got "maybe"`,
    ],
    [
      '[network]\nallow = ["http://x.org"]',
      `${REQ}:2:10: network.allow[0]: "http://x.org" is a URL, not a host name; write "x.org"`,
    ],
    ['[network]\nask = false', `${REQ}:2:1: unknown key network.ask (did you mean "ask_unknown"?)`],
    [
      'allow_unix_sockets = ["run/x.sock"]',
      `${REQ}:1:23: allow_unix_sockets[0]: "run/x.sock" must be an absolute path`,
    ],
  ])('refuses %j', (text, message) => {
    expect(errorOf(() => requirements(text)).message).toContain(message);
  });
});

describe('resolving the network', () => {
  it('is off by default, and each sandbox mode reads its own table', () => {
    expect(resolve({}).network).toEqual({
      mode: 'off',
      source: 'default',
      allow: [],
      deny: [],
      askUnknown: { value: true, source: 'default' },
    });
    const user = userConfig(
      '[sandbox_workspace_write]\nnetwork = "on"\n[sandbox_read_only]\nnetwork = { allow = ["github.com"] }\n',
    );
    expect(resolve({ user }).network).toMatchObject({ mode: 'on', source: `${FILE}:2:1` });
    const readOnly = resolve({
      user,
      cli: { sandboxMode: { value: 'read-only', flag: '--sandbox read-only' } },
    });
    expect(readOnly.network).toMatchObject({
      mode: 'domains',
      source: `${FILE}:4:1`,
      allow: [{ pattern: 'github.com', source: `${FILE}:4:22` }],
    });
    expect(
      resolve({
        user,
        cli: { sandboxMode: { value: 'danger-full-access', flag: '--sandbox danger-full-access' } },
      }).network,
    ).toMatchObject({
      mode: 'on',
      source: 'sandbox mode danger-full-access (from --sandbox danger-full-access): no sandbox',
    });
  });

  it('--allow-domain adds hosts to the config list (keeping its deny list), or makes "on" and "off" a list', () => {
    const user = userConfig(
      '[sandbox_workspace_write]\nnetwork = { allow = ["github.com"], deny = ["gist.github.com"] }\n',
    );
    const resolved = resolve({
      user,
      cli: { allowDomains: [flag('--allow-domain', 'pypi.org'), flag('--allow-domain', 'github.com')] },
    });
    expect(resolved.network).toEqual({
      mode: 'domains',
      source: `${FILE}:2:1 and --allow-domain pypi.org, --allow-domain github.com`,
      allow: [
        { pattern: 'github.com', source: `${FILE}:2:22` },
        { pattern: 'pypi.org', source: '--allow-domain pypi.org' },
      ],
      deny: [{ pattern: 'gist.github.com', source: `${FILE}:2:45` }],
      askUnknown: { value: true, source: 'default' },
    });
    for (const text of ['[sandbox_workspace_write]\nnetwork = "on"\n', '']) {
      expect(
        resolve({ user: userConfig(text), cli: { allowDomains: [flag('--allow-domain', 'a.org')] } }).network,
      ).toMatchObject({
        mode: 'domains',
        source: '--allow-domain a.org',
        allow: [{ pattern: 'a.org', source: '--allow-domain a.org' }],
        deny: [],
      });
    }
  });

  it('--network and --no-network win over the table; with --allow-domain they are a mistake', () => {
    const user = userConfig('[sandbox_workspace_write]\nnetwork = { allow = ["github.com"] }\n');
    expect(resolve({ user, cli: { network: { value: true, flag: '--network' } } }).network).toMatchObject({
      mode: 'on',
      source: '--network',
    });
    expect(resolve({ user, cli: { network: { value: false, flag: '--no-network' } } }).network).toMatchObject(
      {
        mode: 'off',
        source: '--no-network',
      },
    );
    const error = errorOf(() =>
      resolve({
        cli: {
          network: { value: false, flag: '--no-network' },
          allowDomains: [flag('--allow-domain', 'a.org')],
        },
      }),
    );
    expect((error as UxError).code).toBe('invalid_arguments');
    expect(error.message).toBe(
      '--allow-domain a.org limits the network to listed hosts and --no-network takes it away; give one',
    );
  });

  it('expands ~ in allow_unix_sockets, adds --allow-unix-socket, and drops repeats', () => {
    const user = userConfig(
      '[sandbox_workspace_write]\nallow_unix_sockets = ["~/.ssh/agent.sock", "/run/a//b.sock/"]\n[sandbox_read_only]\nallow_unix_sockets = ["/ro.sock"]\n',
    );
    expect(
      resolve({
        user,
        cli: {
          allowUnixSockets: [
            flag('--allow-unix-socket', '/run/a/b.sock'),
            flag('--allow-unix-socket', '/x.sock'),
          ],
        },
      }).allowUnixSockets,
    ).toEqual([
      {
        path: '/home/dev/.ssh/agent.sock',
        source: `${FILE}:2:1`,
        location: { file: FILE, line: 2, column: 1 },
      },
      { path: '/run/a/b.sock', source: `${FILE}:2:1`, location: { file: FILE, line: 2, column: 1 } },
      { path: '/x.sock', source: '--allow-unix-socket /x.sock' },
    ]);
    expect(
      resolve({ user, cli: { sandboxMode: { value: 'read-only', flag: '--sandbox read-only' } } })
        .allowUnixSockets,
    ).toEqual([{ path: '/ro.sock', source: `${FILE}:4:1`, location: { file: FILE, line: 4, column: 1 } }]);
    expect(resolve({}).allowUnixSockets).toEqual([]);
  });
});

describe('the requirements cap the network', () => {
  const on = userConfig('[sandbox_workspace_write]\nnetwork = "on"\n');
  const listed = userConfig('[sandbox_workspace_write]\nnetwork = { allow = ["api.github.com"] }\n');

  it('"off": the user may only keep it off; "on", a list and --allow-domain are refused naming both places', () => {
    const cap = requirements('network = "off"\n');
    expect(resolve({ requirements: cap }).network).toMatchObject({
      mode: 'off',
      cap: { mode: 'off', source: `${REQ}:1:1` },
    });
    expect(errorOf(() => resolve({ user: on, requirements: cap })).message).toBe(
      `${REQ}:1:1: network "on" (from ${FILE}:2:1) is not allowed here: network = "off" (sandboxed commands get no network)`,
    );
    expect(errorOf(() => resolve({ user: listed, requirements: cap })).message).toBe(
      `${REQ}:1:1: network by domain (from ${FILE}:2:1) is not allowed here: network = "off" (sandboxed commands get no network)`,
    );
    expect(
      errorOf(() => resolve({ requirements: cap, cli: { allowDomains: [flag('--allow-domain', 'a.org')] } }))
        .message,
    ).toBe(
      `${REQ}:1:1: network by domain (from --allow-domain a.org) is not allowed here: network = "off" (sandboxed commands get no network)`,
    );
    expect(
      errorOf(() => resolve({ requirements: cap, cli: { network: { value: true, flag: '--network' } } })),
    ).toSatisfy(ConfigError.isInstance);
    expect(
      resolve({ user: on, requirements: cap, cli: { network: { value: false, flag: '--no-network' } } })
        .network.mode,
    ).toBe('off');
  });

  it('"on" caps nothing', () => {
    expect(resolve({ user: on, requirements: requirements('network = "on"\n') }).network.mode).toBe('on');
  });

  it('a list: user entries must fall under it (exactly, below a wildcard, on a listed port), never "on"', () => {
    const cap = requirements(
      '[network]\nallow = ["github.com", "*.github.com", "*.corp.example", "pypi.org:443"]\n',
    );
    expect(errorOf(() => resolve({ user: on, requirements: cap })).message).toBe(
      `${REQ}:1:2: network "on" (from ${FILE}:2:1) is not allowed here: the network is allowed by domain only (network.allow = ["github.com", "*.github.com", "*.corp.example", "pypi.org:443"]); list the hosts instead (network = { allow = […] } or --allow-domain HOST)`,
    );
    expect(
      errorOf(() => resolve({ requirements: cap, cli: { network: { value: true, flag: '--network' } } }))
        .message,
    ).toContain('network "on" (from --network) is not allowed here');
    const narrowed = resolve({
      user: listed,
      requirements: cap,
      cli: {
        allowDomains: ['github.com', 'a.b.corp.example', '*.x.corp.example', 'pypi.org:443'].map((host) =>
          flag('--allow-domain', host),
        ),
      },
    });
    expect(narrowed.network.allow.map((entry) => entry.pattern)).toEqual([
      'api.github.com',
      'github.com',
      'a.b.corp.example',
      '*.x.corp.example',
      'pypi.org:443',
    ]);
    expect(narrowed.network.cap).toEqual({
      mode: 'domains',
      source: `${REQ}:1:2`,
      allow: ['github.com', '*.github.com', '*.corp.example', 'pypi.org:443'],
      deny: [],
    });
  });

  it('a list: an entry it does not cover is refused, naming the entry, where it was written, and the requirement', () => {
    const cap = requirements('[network]\nallow = ["*.github.com", "pypi.org:443"]\n');
    const user = userConfig(
      '[sandbox_workspace_write]\nnetwork = { allow = ["api.github.com", "evil.org"] }\n',
    );
    expect(errorOf(() => resolve({ user, requirements: cap })).message).toBe(
      `${REQ}:2:1: network.allow entry "evil.org" (from ${FILE}:2:40) is not allowed here: no entry of network.allow = ["*.github.com", "pypi.org:443"] covers it`,
    );
    for (const host of ['github.com', 'pypi.org', 'pypi.org:80', '*.com.github.com.evil', '140.82.112.3']) {
      const error = errorOf(() =>
        resolve({ requirements: cap, cli: { allowDomains: [flag('--allow-domain', host)] } }),
      );
      expect(ConfigError.isInstance(error)).toBe(true);
      expect(error.message).toContain(
        `network.allow entry "${host}" (from --allow-domain ${host}) is not allowed here`,
      );
    }
  });

  it("a list: its deny entries always apply, before the user's", () => {
    const cap = requirements('[network]\nallow = ["*.github.com"]\ndeny = ["gist.github.com"]\n');
    const user = userConfig(
      '[sandbox_workspace_write]\nnetwork = { allow = ["api.github.com"], deny = ["raw.github.com"] }\n',
    );
    expect(resolve({ user, requirements: cap }).network.deny).toEqual([
      { pattern: 'gist.github.com', source: `${REQ}:3:9` },
      { pattern: 'raw.github.com', source: `${FILE}:2:49` },
    ]);
  });

  it('ask_unknown = false pins "no questions"; a user ask_unknown = true is refused, false or nothing is fine', () => {
    const cap = requirements('[network]\nallow = ["*.github.com"]\nask_unknown = false\n');
    expect(resolve({ user: listed, requirements: cap }).network.askUnknown).toEqual({
      value: false,
      source: `${REQ}:3:1`,
    });
    expect(
      resolve({ requirements: cap, cli: { allowDomains: [flag('--allow-domain', 'api.github.com')] } })
        .network.askUnknown,
    ).toEqual({ value: false, source: `${REQ}:3:1` });
    const asking = userConfig(
      '[sandbox_workspace_write]\nnetwork = { allow = ["api.github.com"], ask_unknown = true }\n',
    );
    expect(errorOf(() => resolve({ user: asking, requirements: cap })).message).toBe(
      `${REQ}:3:1: network.ask_unknown = true (from ${FILE}:2:41) is not allowed here: network.ask_unknown = false (hosts outside the allow list are denied without a question)`,
    );
    const quiet = userConfig('[sandbox_workspace_write]\nnetwork = { allow = [], ask_unknown = false }\n');
    expect(resolve({ user: quiet }).network.askUnknown).toEqual({ value: false, source: `${FILE}:2:25` });
    expect(resolve({ user: asking }).network).toEqual({
      mode: 'domains',
      source: `${FILE}:2:1`,
      location: { file: FILE, line: 2, column: 1 },
      allow: [{ pattern: 'api.github.com', source: `${FILE}:2:22` }],
      deny: [],
      askUnknown: { value: true, source: `${FILE}:2:41` },
    });
    // Without the pin, the user's list asks about the rest.
    expect(
      resolve({ user: listed, requirements: requirements('[network]\nallow = ["*.github.com"]\n') }).network
        .askUnknown.value,
    ).toBe(true);
  });

  it('refuses danger-full-access under a network or unix socket cap: nothing would enforce it', () => {
    const fullAccess = {
      sandboxMode: { value: 'danger-full-access' as const, flag: '--sandbox danger-full-access' },
    };
    expect(
      errorOf(() => resolve({ requirements: requirements('network = "off"\n'), cli: fullAccess })).message,
    ).toBe(
      `${REQ}:1:1: sandbox mode danger-full-access (from --sandbox danger-full-access) runs commands without a sandbox, so network = "off" here could not be enforced; choose read-only or workspace-write`,
    );
    expect(
      errorOf(() =>
        resolve({ requirements: requirements('allow_unix_sockets = ["/a.sock"]\n'), cli: fullAccess }),
      ).message,
    ).toContain('so allow_unix_sockets here could not be enforced');
    expect(resolve({ requirements: requirements('network = "on"\n'), cli: fullAccess }).network.mode).toBe(
      'on',
    );
  });

  it('caps allow_unix_sockets: entries must be listed there (after ~ expansion on both sides)', () => {
    const cap = requirements('allow_unix_sockets = ["~/.ssh/agent.sock", "/run/docker.sock"]\n');
    const user = userConfig(
      '[sandbox_workspace_write]\nallow_unix_sockets = ["/home/dev/.ssh/agent.sock"]\n',
    );
    expect(resolve({ user, requirements: cap }).allowUnixSockets).toEqual([
      {
        path: '/home/dev/.ssh/agent.sock',
        source: `${FILE}:2:1`,
        location: { file: FILE, line: 2, column: 1 },
      },
    ]);
    expect(
      errorOf(() =>
        resolve({
          user,
          requirements: cap,
          cli: { allowUnixSockets: [flag('--allow-unix-socket', '/tmp/tmux.sock')] },
        }),
      ).message,
    ).toBe(
      `${REQ}:1:1: allow_unix_sockets entry "/tmp/tmux.sock" (from --allow-unix-socket /tmp/tmux.sock) is not allowed here: allow_unix_sockets = ["/home/dev/.ssh/agent.sock", "/run/docker.sock"]`,
    );
  });
});

describe('pattern helpers', () => {
  it.each([
    ['github.com', 'github.com', true],
    ['github.com', 'GitHub.com.', true],
    ['github.com', 'api.github.com', false],
    ['*.github.com', 'api.github.com', true],
    ['*.github.com', 'a.b.github.com', true],
    ['*.github.com', '*.github.com', true],
    ['*.github.com', '*.api.github.com', true],
    ['*.github.com', 'github.com', false],
    ['*.github.com', 'notgithub.com', false],
    ['github.com', '*.github.com', false],
    ['github.com', 'github.com:443', true],
    ['github.com:443', 'github.com', false],
    ['github.com:443', 'github.com:443', true],
    ['*.github.com:443', 'api.github.com:443', true],
    ['10.0.0.5', '10.0.0.5', true],
    ['10.0.0.5', '167772165', true],
    ['*.example.org', '10.0.0.5', false],
  ])('%s covers %s: %s', (wide, narrow, covers) => {
    expect(domainPatternCovers(wide, narrow)).toBe(covers);
  });

  it('says what is wrong with a pattern without naming a list, and accepts good ones', () => {
    expect(domainPatternProblem('https://a.org/x', 'allow')).toBe(
      '"https://a.org/x" is a URL, not a host name; write "a.org"',
    );
    expect(domainPatternProblem('*', 'deny')).toBeUndefined();
    expect(domainPatternProblem('a.org', 'allow')).toBeUndefined();
    expect(unixSocketProblem('/run/a.sock')).toBeUndefined();
    expect(unixSocketProblem('~')).toBeUndefined();
    expect(unixSocketProblem('a.sock')).toContain('must be an absolute path');
  });
});
