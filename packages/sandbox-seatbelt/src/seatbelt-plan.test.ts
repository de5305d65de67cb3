import {
  type EffectivePolicy,
  type FileSystemEntry,
  InvalidArgumentsError,
  MissingCommandLineError,
  type SandboxPlanRequest,
  SandboxUnavailableError,
} from '@ux/protocol';
import { memoryFsView, proxyEnvironment } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { parseSbpl } from './parse-sbpl.js';
import { planSeatbelt } from './seatbelt-plan.js';
import { type SeatbeltWritableRoot, seatbeltRules } from './seatbelt-rules.js';

const fs = memoryFsView({
  '/w/.git/config': '',
  '/w/.git/hooks/': '',
  '/w/sub/.git/config': '',
  '/tmp/': '',
});
const entries = (...more: FileSystemEntry[]): EffectivePolicy => ({
  fileSystem: {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
      ...more,
    ],
  },
  network: 'restricted',
});
const request = (overrides: Partial<SandboxPlanRequest> = {}): SandboxPlanRequest => ({
  argv: ['/bin/sh', '-c', 'true'],
  cwd: '/w',
  env: { PATH: '/usr/bin:/bin' },
  policy: entries(),
  tty: false,
  ...overrides,
});
const facts = { fs, hostEnv: {} };
const PROXY = { unixSocket: '/Users/me/.ux/proxy.sock', loopbackPort: 43128 };
const excludedPaths = (root: SeatbeltWritableRoot) => root.excluded.map((entry) => entry.path);

describe('planSeatbelt', () => {
  it('rejects an empty argv, a relative cwd and a Windows cwd', () => {
    expect(() => planSeatbelt(request({ argv: [] }), facts)).toThrow(MissingCommandLineError);
    for (const cwd of ['w', 'C:\\w']) {
      try {
        planSeatbelt(request({ cwd }), facts);
        expect.unreachable();
      } catch (error) {
        expect(InvalidArgumentsError.isInstance(error)).toBe(true);
        expect((error as Error).message).toContain('cwd: must be an absolute macOS path');
      }
    }
  });

  it('refuses to nest inside another sandbox, naming the marker and a fix', () => {
    for (const [env, hostEnv] of [
      [{ CODEX_SANDBOX: 'seatbelt' }, {}],
      [{}, { UX_SANDBOX: 'seatbelt' }],
      [{ SANDBOX_RUNTIME: '1' }, {}],
    ] as const) {
      try {
        planSeatbelt(request({ env: { ...env } }), { fs, hostEnv });
        expect.unreachable();
      } catch (error) {
        expect(SandboxUnavailableError.isInstance(error)).toBe(true);
        const unavailable = error as SandboxUnavailableError;
        expect(unavailable.code).toBe('sandbox_unavailable');
        expect(unavailable.reason).toMatch(
          /already inside a sandbox \((CODEX_SANDBOX=seatbelt|UX_SANDBOX=seatbelt|SANDBOX_RUNTIME=1)\)/,
        );
        expect(unavailable.fix).toContain('external-sandbox');
      }
    }
    // An empty marker is no marker.
    expect(() => planSeatbelt(request({ env: { UX_SANDBOX: '' } }), facts)).not.toThrow();
  });

  it('runs an external-sandbox command as is and says nothing is enforced', () => {
    const plan = planSeatbelt(
      request({
        env: { CODEX_SANDBOX: 'seatbelt' },
        policy: { fileSystem: { kind: 'external-sandbox' }, network: 'restricted' },
      }),
      facts,
    );
    expect(plan.argv).toEqual(['/bin/sh', '-c', 'true']);
    expect(plan.env).toEqual({ CODEX_SANDBOX: 'seatbelt' });
    expect(plan.enforcement).toMatchObject({ fileSystem: 'none', network: 'none' });
  });

  it('keeps the environment and adds the sandbox markers', () => {
    const restricted = planSeatbelt(request({ env: { PATH: '/bin', EMPTY: '' } }), facts);
    expect(restricted.env).toEqual({
      PATH: '/bin',
      EMPTY: '',
      UX_SANDBOX: 'seatbelt',
      UX_SANDBOX_NETWORK_DISABLED: '1',
    });
    const enabled = planSeatbelt(request({ policy: { ...entries(), network: 'enabled' } }), facts);
    expect(enabled.env).toEqual({ PATH: '/usr/bin:/bin', UX_SANDBOX: 'seatbelt' });
    expect(enabled.profile).toContain('(allow network-outbound (remote ip "*:*"))');
    for (const plan of [restricted, enabled]) expect(plan.profile).not.toContain('network*');
  });

  it('gives a proxied command the proxy variables for its loopback port, which win over the request', () => {
    const plan = planSeatbelt(
      request({
        env: { PATH: '/bin', HTTPS_PROXY: 'http://corp-proxy:8080', GIT_SSH_COMMAND: 'ssh -v' },
        policy: { ...entries(), network: 'proxied', networkProxy: PROXY },
      }),
      facts,
    );
    expect(plan.env).toEqual({
      PATH: '/bin',
      ...proxyEnvironment({ httpPort: 43128, platform: 'darwin' }),
      UX_SANDBOX: 'seatbelt',
    });
    expect(plan.env.HTTPS_PROXY).toBe('http://127.0.0.1:43128');
    expect(plan.env.GIT_SSH_COMMAND).toBe("ssh -o ProxyCommand='nc -X 5 -x 127.0.0.1:43128 %h %p'");
    expect(plan.env).not.toHaveProperty('UX_SANDBOX_NETWORK_DISABLED');
    expect(plan.enforcement.network).toBe('enforced');
    expect(plan.enforcement.notes).toContainEqual(expect.stringContaining('127.0.0.1:43128'));
  });

  it('passes the proxy address as a -D parameter, never in the profile text', () => {
    const plan = planSeatbelt(
      request({ policy: { ...entries(), network: 'proxied', networkProxy: PROXY } }),
      facts,
    );
    expect(plan.parameters).toContainEqual(['PROXY_LOOPBACK_ADDRESS', 'localhost:43128']);
    expect(plan.argv).toContain('-DPROXY_LOOPBACK_ADDRESS=localhost:43128');
    expect(plan.profile).toContain('(allow network-outbound (remote tcp (param "PROXY_LOOPBACK_ADDRESS")))');
    expect(plan.profile).not.toContain('43128');
    // Nothing else of the network: no inbound, no bind, no other outbound, no DNS services.
    const network = plan.profile.slice(plan.profile.indexOf('; network'));
    expect(network.match(/^\(allow .*$/gm)).toEqual([
      '(allow network-outbound (remote tcp (param "PROXY_LOOPBACK_ADDRESS")))',
    ]);
    expect(plan.profile).not.toMatch(
      /network-inbound|network-bind|dnssd|DNSConfiguration|\(allow system-socket\)/,
    );
  });

  it('refuses a proxied network without a loopback port: Seatbelt cannot reach the proxy socket', () => {
    for (const fileSystem of [entries().fileSystem, { kind: 'unrestricted' as const }]) {
      try {
        planSeatbelt(
          request({
            policy: { fileSystem, network: 'proxied', networkProxy: { unixSocket: PROXY.unixSocket } },
          }),
          facts,
        );
        expect.unreachable();
      } catch (error) {
        expect(SandboxUnavailableError.isInstance(error)).toBe(true);
        const unavailable = error as SandboxUnavailableError;
        expect(unavailable.backend).toBe('seatbelt');
        expect(unavailable.reason).toContain('listen on loopback');
        expect(unavailable.reason).toContain('macOS');
        expect(unavailable.fix).toContain('networkProxy.loopbackPort');
        expect(unavailable.fix).toContain('"on" or "off"');
      }
    }
  });

  it('refuses a proxied network without the proxy, and unix sockets that are not absolute', () => {
    for (const policy of [
      { ...entries(), network: 'proxied' as const },
      { ...entries(), allowUnixSockets: ['run/docker.sock'] },
    ]) {
      expect(() => planSeatbelt(request({ policy }), facts)).toThrow(InvalidArgumentsError);
    }
  });

  it('runs an external-sandbox command as is whatever its network, since the outer sandbox decides', () => {
    const plan = planSeatbelt(
      request({
        policy: {
          fileSystem: { kind: 'external-sandbox' },
          network: 'proxied',
          networkProxy: { unixSocket: PROXY.unixSocket },
          allowUnixSockets: ['/var/run/docker.sock'],
        },
      }),
      facts,
    );
    expect(plan.argv).toEqual(['/bin/sh', '-c', 'true']);
    expect(plan.enforcement).toMatchObject({ fileSystem: 'none', network: 'none' });
  });

  it('lists each unix socket once, canonical, as a -D parameter, in every network mode', () => {
    const sockets = memoryFsView({
      '/w/': '',
      '/tmp': '-> private/tmp',
      '/private/tmp/agent/': '',
      '/private/tmp/link.sock': '-> /private/tmp/agent/real.sock',
      '/private/tmp/agent/real.sock': '',
    });
    for (const network of ['restricted', 'enabled', 'proxied'] as const) {
      const plan = planSeatbelt(
        request({
          policy: {
            ...entries(),
            network,
            networkProxy: PROXY,
            allowUnixSockets: ['/tmp/link.sock', '/private/tmp/agent/real.sock', '/tmp/agent/../other.sock'],
          },
        }),
        { fs: sockets, hostEnv: {} },
      );
      expect(plan.parameters.filter(([name]) => name.startsWith('UNIX_SOCKET_PATH_'))).toEqual([
        ['UNIX_SOCKET_PATH_0', '/private/tmp/agent/real.sock'],
        ['UNIX_SOCKET_PATH_1', '/private/tmp/other.sock'],
      ]);
      expect(plan.profile).toContain(
        '(allow network-outbound (remote unix-socket (path-literal (param "UNIX_SOCKET_PATH_1"))))',
      );
      expect(plan.profile).not.toContain('/private/tmp');
      // AF_UNIX sockets may be created: the network-on section allows every domain already.
      expect(plan.profile.includes('(allow system-socket (socket-domain AF_UNIX))')).toBe(
        network !== 'enabled',
      );
      expect(plan.enforcement.notes).toContainEqual(
        'unix sockets the command may connect to: /private/tmp/agent/real.sock, /private/tmp/other.sock',
      );
    }
  });

  it('allows no unix socket and creates none when the policy lists none', () => {
    for (const network of ['restricted', 'proxied'] as const) {
      const plan = planSeatbelt(request({ policy: { ...entries(), network, networkProxy: PROXY } }), facts);
      expect(plan.profile).not.toMatch(/unix-socket|AF_UNIX/);
    }
    const enabled = planSeatbelt(request({ policy: { ...entries(), network: 'enabled' } }), facts);
    // Only mDNSResponder's, for name resolution.
    expect(enabled.profile.match(/unix-socket.*$/gm)).toEqual([
      'unix-socket (path-literal "/private/var/run/mDNSResponder")))',
    ]);
  });

  it('writes the violation tag on every deny when a collector is used', () => {
    const plan = planSeatbelt(
      request({ policy: entries({ path: { type: 'path', path: '/w/secret' }, access: 'none' }) }),
      {
        ...facts,
        violationTag: 'ux-sbx-ab-1',
      },
    );
    const denies = parseSbpl(plan.profile).filter(
      (form) => form.type === 'list' && form.items[0]?.type === 'symbol' && form.items[0].value === 'deny',
    );
    expect(denies.length).toBeGreaterThanOrEqual(3);
    for (const form of denies) {
      expect(form).toMatchObject({
        items: expect.arrayContaining([
          {
            type: 'list',
            offset: expect.any(Number),
            items: [
              expect.objectContaining({ value: 'with' }),
              expect.objectContaining({ value: 'message' }),
              expect.objectContaining({ value: 'ux-sbx-ab-1' }),
            ],
          },
        ]),
      });
    }
  });

  it('refuses a deny-read glob whose regex would pass the 900-byte limit, or holds a control character', () => {
    const long = `/w/${'a'.repeat(890)}*`;
    expect(() =>
      planSeatbelt(
        request({ policy: entries({ path: { type: 'glob', pattern: long }, access: 'none' }) }),
        facts,
      ),
    ).toThrow(/needs a \d+-byte Seatbelt regex; the limit is 900 bytes/);
    expect(() =>
      planSeatbelt(
        request({ policy: entries({ path: { type: 'glob', pattern: '**/a\nb' }, access: 'none' }) }),
        facts,
      ),
    ).toThrow(/control character/);
  });

  it('refuses a writable root too deep for its exclusions to fit a Seatbelt regex', () => {
    const deep = `/${Array.from({ length: 150 }, () => 'd').join('/')}`;
    expect(() =>
      planSeatbelt(request({ cwd: deep }), { fs: memoryFsView({ [`${deep}/`]: '' }), hostEnv: {} }),
    ).toThrow(
      /writable root "\/d\/d.*" is too deep: excluding .* needs a \d+-byte Seatbelt regex; the limit is 900 bytes/,
    );
  });

  it('plans the same request identically', () => {
    expect(planSeatbelt(request(), facts)).toEqual(planSeatbelt(request(), facts));
  });
});

describe('seatbeltRules', () => {
  it('spells /tmp, /var and /etc under /private even where nothing resolves them', () => {
    const rules = seatbeltRules(
      request({
        cwd: '/tmp',
        env: { TMPDIR: '/var/folders/x/T' },
        policy: entries({ path: { type: 'special', value: 'tmpdir' }, access: 'write' }),
      }),
      memoryFsView({ '/tmp/': '', '/var/folders/x/T/': '' }),
    );
    expect(rules.writableRoots.map((root) => root.root)).toEqual([
      '/private/tmp',
      '/private/var/folders/x/T',
    ]);
    expect(excludedPaths(rules.writableRoots[0]!)).toContain('/private/tmp/.git');
  });

  it("makes an outer root exclude an inner root's protected paths, since Seatbelt allows are a union", () => {
    const rules = seatbeltRules(
      request({ policy: entries({ path: { type: 'path', path: '/w/sub' }, access: 'write' }) }),
      fs,
    );
    const outer = rules.writableRoots.find((root) => root.root === '/w')!;
    expect(excludedPaths(outer)).toEqual(
      expect.arrayContaining(['/w/.git/hooks', '/w/sub/.git/config', '/w/sub/.git/hooks']),
    );
    // The outer root's regex counts its own one component, then spells the rest in every case.
    expect(outer.excluded.find((entry) => entry.path === '/w/sub/.git/config')).toEqual({
      path: '/w/sub/.git/config',
      subtree: false,
      regex: '^/[^/]+/([sS]|\u017f)[uU][bB]/[.][gG][iI][tT]/[cC][oO][nN][fF][iI][gG]$',
    });
  });

  it('does not let a deeper writable entry re-grant what an outer root protects (one predicate)', () => {
    const effective = entries({ path: { type: 'path', path: '/w/.git/hooks' }, access: 'write' });
    const rules = seatbeltRules(request({ policy: effective }), fs);
    // protectedEntryFor: /w protects /w/.git/hooks, so the deeper root /w/.git/hooks gets no grant.
    expect(rules.writableRoots.map((root) => root.root)).toEqual(['/w']);
    expect(rules.ungrantedRoots).toEqual([
      { root: '/w/.git/hooks', within: '/w/.git/hooks', why: expect.stringMatching(/^git hooks/) },
    ]);
    expect(excludedPaths(rules.writableRoots[0]!)).toEqual(
      expect.arrayContaining(['/w/.git/hooks', '/w/.git/config']),
    );
    expect(planSeatbelt(request({ policy: effective }), facts).enforcement.notes).toContain(
      'writable root /w/.git/hooks is itself protected (git hooks: programs the next git command runs on the host), so nothing was granted for it',
    );
  });

  it("keeps an outer root's protected names inside a deeper root (the home's, for a workspace in ~/.config)", () => {
    const home = memoryFsView({ '/Users/me/.config/git/config': '', '/Users/me/.config/nvim/': '' });
    const rules = seatbeltRules(
      request({
        cwd: '/Users/me/.config',
        env: { HOME: '/Users/me' },
        policy: entries({ path: { type: 'path', path: '/Users/me' }, access: 'write' }),
      }),
      home,
    );
    const inner = rules.writableRoots.find((root) => root.root === '/Users/me/.config')!;
    // Before, only the outer root excluded them, and the deeper root's allow granted them again.
    expect(excludedPaths(inner)).toEqual(
      expect.arrayContaining(['/Users/me/.config/git', '/Users/me/.config/nvim', '/Users/me/.config/fish']),
    );
  });

  it('guards the parents of protected and deny-read paths inside writable roots, and nothing outside', () => {
    const rules = seatbeltRules(
      request({
        policy: entries(
          { path: { type: 'path', path: '/w/data/secret' }, access: 'none' },
          { path: { type: 'path', path: '/etc/hosts' }, access: 'none' },
        ),
      }),
      fs,
    );
    // info/attributes is missing here, so it is not protected and .git/info is not guarded.
    expect(rules.moveGuards.map((guard) => [guard.path, guard.root, guard.regex])).toEqual([
      ['/w', '/w', '^/[^/]+$'],
      ['/w/.git', '/w', '^/[^/]+/[.][gG][iI][tT]$'],
      ['/w/data', '/w', '^/[^/]+/[dD][aA][tT][aA]$'],
    ]);
  });

  it('bases each guard on the outermost writable root holding it, so every granted spelling is covered', () => {
    const rules = seatbeltRules(
      request({ policy: entries({ path: { type: 'path', path: '/w/sub' }, access: 'write' }) }),
      fs,
    );
    const guard = rules.moveGuards.find((entry) => entry.path === '/w/sub/.git')!;
    // /w grants /w/SUB/.git as well as /w/sub/.git; a guard under (subpath /w/sub) would miss the first.
    expect(guard.root).toBe('/w');
    expect(guard.regex).toBe('^/[^/]+/([sS]|\u017f)[uU][bB]/[.][gG][iI][tT]$');
  });

  it('excludes a protected file alone and anything else with its subtree', () => {
    const rules = seatbeltRules(request(), fs);
    const byPath = new Map(rules.writableRoots[0]!.excluded.map((entry) => [entry.path, entry.subtree]));
    expect(Object.fromEntries(byPath)).toEqual({
      '/w/.git/config': false,
      '/w/.git/config.worktree': true,
      '/w/.git/hooks': true,
      '/w/.git/commondir': true,
      '/w/.ux': true,
      '/w/.codex': true,
      '/w/.agents': true,
    });
  });

  it('orders reads broad to narrow, a deny after an allow at the same depth', () => {
    const rules = seatbeltRules(
      request({
        policy: entries(
          { path: { type: 'path', path: '/w/docs' }, access: 'none' },
          { path: { type: 'path', path: '/w/docs/public' }, access: 'read' },
          { path: { type: 'path', path: '/w/docs/public/draft' }, access: 'none' },
        ),
      }),
      fs,
    );
    expect(rules.reads).toEqual([
      { path: '/', access: 'allow' },
      { path: '/w/docs', access: 'deny' },
      { path: '/w/docs/public', access: 'allow' },
      { path: '/w/docs/public/draft', access: 'deny' },
    ]);
  });
});
