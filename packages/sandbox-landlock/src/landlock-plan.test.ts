import {
  type EffectivePolicy,
  policyNeeds,
  SandboxUnavailableError,
  sandboxPluginProblem,
  unmetNeeds,
} from '@ux/protocol';
import { memoryFsView } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { type LandlockHost, landlockEnforces, planLandlock } from './landlock-plan.js';
import { landlockSettingsSchema, sandboxPlugin } from './sandbox-plugin.js';

const PROGRAM = Uint8Array.from([0x06, 0, 0, 0, 0, 0, 0xff, 0x7f]);
const HEX = '060000000000ff7f';

const SYSTEM: Record<string, string> = {
  '/usr/bin/sh': 'elf',
  '/etc/passwd': 'root:x:0:0',
  '/dev/null': '',
  '/dev/tty': '',
  '/dev/vda': '',
  '/dev/pts/0': '',
  '/proc/1/': '',
  '/run/user/': '',
  '/tmp/other': 'x',
  '/tmp/ux-0/bwrap-1-00000000/': '',
  '/home/u/.ssh/id': 'key',
  '/home/u/notes': 'n',
  '/w/src/main.c': 'int main;',
  '/opt/ux/ux-landlock-exec': 'elf',
};

const host = (entries: Record<string, string> = {}, overrides: Partial<LandlockHost> = {}): LandlockHost => ({
  launcher: '/opt/ux/ux-landlock-exec',
  abi: 7,
  seccompProgram: () => PROGRAM,
  fs: memoryFsView({ ...SYSTEM, ...entries }),
  homeDir: '/home/u',
  privateDirs: ['/run/user/0/ux', '/tmp/ux-0'],
  privateTmp: '/tmp/ux-0/landlock-1-00000000/tmp',
  hostPrograms: ['/opt/ux/ux-landlock-exec'],
  ...overrides,
});

type Entries = Extract<EffectivePolicy['fileSystem'], { kind: 'restricted' }>['entries'];
const workspaceWrite = (
  extra: Entries = [],
  network: EffectivePolicy['network'] = 'restricted',
): EffectivePolicy => ({
  fileSystem: {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
      ...extra,
    ],
  },
  network,
});

const request = (policy: EffectivePolicy, extra: Partial<Parameters<typeof planLandlock>[0]> = {}) => ({
  argv: ['/bin/sh', '-c', 'make'],
  cwd: '/w',
  env: { PATH: '/usr/bin' },
  policy,
  tty: false,
  ...extra,
});

const refusal = (run: () => unknown): SandboxUnavailableError => {
  try {
    run();
  } catch (error) {
    if (SandboxUnavailableError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('the plan was not refused');
};

describe('planLandlock', () => {
  it('grants read along the way to what is hidden, the workspace writable, a few devices, then the command', () => {
    const plan = planLandlock(request(workspaceWrite()), host());
    expect(plan.argv.slice(0, 3)).toEqual(['/opt/ux/ux-landlock-exec', '--min-abi', '7']);
    expect(plan.argv.slice(-6)).toEqual(['--seccomp-program', HEX, '--', '/bin/sh', '-c', 'make']);
    // `/` and `/tmp` hold hidden directories, `/dev` is cut: their entries are granted one by one.
    expect(plan.rules.ro).toEqual(['/etc', '/home', '/opt', '/proc', '/run', '/tmp/other', '/usr', '/w']);
    expect(plan.rules.rw).toEqual(['/w']);
    expect(plan.rules.dev).toEqual(['/dev/null', '/dev/tty']);
    expect(plan.argv).toContain('--net-off');
    expect(plan.argv).toContain('--scope');
    expect(plan.env).toMatchObject({
      UX_SANDBOX: 'landlock',
      UX_SANDBOX_NETWORK_DISABLED: '1',
      PATH: '/usr/bin',
    });
    expect(plan.notes.join('\n')).toMatch(/cannot be listed.*\/, \/tmp/);
    expect(plan.notes.join('\n')).toMatch(/metadata/);
  });

  it('never grants ux runtime roots, raw devices or other terminals', () => {
    const plan = planLandlock(request(workspaceWrite()), host());
    const granted = [...plan.rules.ro, ...plan.rules.rw, ...plan.rules.dev];
    for (const path of ['/', '/tmp', '/tmp/ux-0', '/dev', '/dev/vda', '/dev/pts', '/dev/pts/0'])
      expect(granted).not.toContain(path);
  });

  it('hides deny-read paths by granting their siblings, and keeps them out of the grants', () => {
    const plan = planLandlock(
      request(workspaceWrite([{ path: { type: 'path', path: '/home/u/.ssh' }, access: 'none' }])),
      host(),
    );
    expect(plan.rules.ro).toContain('/home/u/notes');
    expect(plan.rules.ro).not.toContain('/home');
    expect(plan.rules.ro).not.toContain('/home/u/.ssh');
  });

  it('does not follow links while granting: a link to a directory with something hidden grants nothing', () => {
    const plan = planLandlock(
      request(workspaceWrite()),
      host({ '/tmp/link': '-> /run', '/run/user/0/ux/sock': '', '/run/lock/': '' }),
    );
    expect(plan.rules.ro).toContain('/run/lock');
    for (const path of ['/tmp/link', '/run', '/run/user', '/run/user/0', '/run/user/0/ux'])
      expect(plan.rules.ro).not.toContain(path);
  });

  it('refuses an existing .git inside a writable root, naming it, with a fix that is not "run unsandboxed"', () => {
    const error = refusal(() =>
      planLandlock(request(workspaceWrite()), host({ '/w/.git/config': '[core]' })),
    );
    expect(error.backend).toBe('landlock');
    expect(error.reason).toContain('/w/.git');
    expect(error.reason).toMatch(/Landlock can only grant/);
    expect(error.fix).toMatch(/bwrap/);
    expect(error.fix).toMatch(/read-only/);
  });

  it('refuses a protected start-up file inside a writable root (home as the workspace)', () => {
    const error = refusal(() =>
      planLandlock(request(workspaceWrite(), { cwd: '/home/u' }), host({ '/home/u/.bashrc': 'x' })),
    );
    expect(error.reason).toContain('/home/u/.bashrc');
  });

  it('watches missing protected names instead, for the path guard to take away', () => {
    const plan = planLandlock(request(workspaceWrite()), host());
    const names = plan.guardTargets.map((target) => `${target.dir}/${target.name}`);
    expect(names).toEqual(expect.arrayContaining(['/w/.git', '/w/.ux', '/w/.codex', '/w/.agents']));
    expect(plan.guardTargets.find((target) => target.name === '.git')?.repository).toBe(true);
  });

  it('watches a missing name below an existing directory from the writable root, which cannot be renamed', () => {
    const plan = planLandlock(
      request(workspaceWrite(), { cwd: '/home/v' }),
      host({ '/home/v/.local/share/x': '' }, { homeDir: '/home/v' }),
    );
    expect(plan.guardTargets).toEqual(
      expect.arrayContaining([expect.objectContaining({ dir: '/home/v', name: '.local/bin' })]),
    );
    expect(plan.guardTargets.every((target) => target.dir === '/home/v')).toBe(true);
  });

  it('watches from the outermost writable root: an inner one can be renamed through the outer', () => {
    const plan = planLandlock(
      request(workspaceWrite([{ path: { type: 'path', path: '/w' }, access: 'write' }]), { cwd: '/w/sub' }),
      host({ '/w/sub/x': '' }),
    );
    expect(plan.rules.rw).toEqual(['/w', '/w/sub']);
    expect(plan.guardTargets).toEqual(
      expect.arrayContaining([expect.objectContaining({ dir: '/w', name: 'sub/.ux' })]),
    );
    expect(plan.guardTargets.filter((target) => target.dir !== '/w')).toEqual([]);
  });

  it('refuses a hidden or deny-read path inside a writable root', () => {
    const hidden = refusal(() =>
      planLandlock(request(workspaceWrite(), { cwd: '/tmp' }), host({ '/tmp/ws/x': 'x' })),
    );
    expect(hidden.reason).toContain('/tmp/ux-0 must stay unreadable');
    const denied = refusal(() =>
      planLandlock(
        request(workspaceWrite([{ path: { type: 'path', path: '/w/secret' }, access: 'none' }])),
        host({ '/w/secret': 'x' }),
      ),
    );
    expect(denied.reason).toContain('/w/secret must stay unreadable');
  });

  it('refuses a host program inside a writable root, and ux files the launch reads there', () => {
    const program = refusal(() => planLandlock(request(workspaceWrite(), { cwd: '/opt' }), host()));
    expect(program.reason).toContain('/opt/ux/ux-landlock-exec');
    const snapshot = refusal(() =>
      planLandlock(
        request(workspaceWrite(), { hostPaths: ['/w/snapshot.sh'] }),
        host({ '/w/snapshot.sh': 'x' }),
      ),
    );
    expect(snapshot.reason).toContain('/w/snapshot.sh');
  });

  it('grants what the launch reads inside a hidden directory, read-only', () => {
    const plan = planLandlock(
      request(workspaceWrite(), { hostPaths: ['/tmp/ux-0/bwrap-1-00000000/snapshot.sh', '/nope'] }),
      host({ '/tmp/ux-0/bwrap-1-00000000/snapshot.sh': 'x' }),
    );
    expect(plan.rules.ro).toContain('/tmp/ux-0/bwrap-1-00000000/snapshot.sh');
    expect(plan.rules.rw).not.toContain('/tmp/ux-0/bwrap-1-00000000/snapshot.sh');
    expect(plan.notes.join('\n')).toMatch(/host path \/nope does not exist/);
  });

  it("a private /tmp: the session's directory writable and in TMPDIR, the host's /tmp cut", () => {
    const policy: EffectivePolicy = {
      ...workspaceWrite([{ path: { type: 'special', value: 'slash_tmp' }, access: 'write' }]),
      privateTmp: true,
    };
    const plan = planLandlock(request(policy), host());
    expect(plan.env.TMPDIR).toBe('/tmp/ux-0/landlock-1-00000000/tmp');
    expect(plan.rules.rw).toEqual(['/w', '/tmp/ux-0/landlock-1-00000000/tmp']);
    expect(plan.rules.ro.filter((path) => path.startsWith('/tmp'))).toEqual([]);
  });

  it('refuses what it cannot hold: a proxied network, allowed unix sockets, a writable /', () => {
    const proxied: EffectivePolicy = {
      ...workspaceWrite([], 'proxied'),
      networkProxy: { unixSocket: '/run/proxy.sock' },
    };
    expect(refusal(() => planLandlock(request(proxied), host())).reason).toMatch(/by domain/);
    const sockets: EffectivePolicy = { ...workspaceWrite(), allowUnixSockets: ['/run/docker.sock'] };
    expect(refusal(() => planLandlock(request(sockets), host())).reason).toMatch(/docker\.sock/);
    const slash = workspaceWrite([{ path: { type: 'special', value: 'root' }, access: 'write' }]);
    expect(refusal(() => planLandlock(request(slash), host())).reason).toMatch(/makes \/ writable/);
  });

  it('asks the launcher for what the ABI has: no TCP rules before 4, no scoping before 6, no write limits before 3', () => {
    const abi5 = planLandlock(request(workspaceWrite()), host({}, { abi: 5 }));
    expect(abi5.argv).toContain('--net-off');
    expect(abi5.argv).not.toContain('--scope');
    expect(abi5.notes.join('\n')).toMatch(/signals .* are not scoped/);
    const abi3 = planLandlock(request(workspaceWrite()), host({}, { abi: 3 }));
    expect(abi3.argv).not.toContain('--net-off');
    expect(refusal(() => planLandlock(request(workspaceWrite()), host({}, { abi: 2 }))).reason).toMatch(
      /truncate/,
    );
  });

  it('refuses rules that would not fit a command line, naming the crowded directory', () => {
    const crowd = Object.fromEntries(
      Array.from({ length: 20_000 }, (_, i) => [`/tmp/${'x'.repeat(50)}-${i}`, '']),
    );
    const error = refusal(() => planLandlock(request(workspaceWrite()), host(crowd)));
    expect(error.reason).toMatch(/\/tmp holds 20001 entries/);
    expect(error.fix).toMatch(/private \/tmp/);
  });

  it('keeps the requested descriptors and refuses bad ones', () => {
    const plan = planLandlock(request(workspaceWrite(), { keepFds: [20, 11] }), host());
    expect(plan.argv.join(' ')).toContain('--keep-fd 11 --keep-fd 20');
    expect(() => planLandlock(request(workspaceWrite(), { keepFds: [3] }), host())).toThrow(/10 to 1023/);
  });
});

describe('landlockEnforces', () => {
  it('declares by ABI, and never what it cannot hold', () => {
    expect(landlockEnforces(0)).toEqual([]);
    expect(landlockEnforces(2)).toEqual(['read_deny', 'network_off']);
    expect(landlockEnforces(7)).toEqual([
      'write_limits',
      'protected_names',
      'read_deny',
      'network_off',
      'private_tmp',
    ]);
    for (const never of ['network_by_domain', 'unix_socket_control', 'process_isolation', 'resource_limits'])
      expect(landlockEnforces(7)).not.toContain(never);
  });

  it('meets what a workspace-write policy needs on ABI 7, and leaves a proxied one unmet', () => {
    expect(unmetNeeds(policyNeeds(workspaceWrite()), landlockEnforces(7))).toEqual([]);
    const proxied: EffectivePolicy = {
      ...workspaceWrite([], 'proxied'),
      networkProxy: { unixSocket: '/run/proxy.sock' },
    };
    expect(unmetNeeds(policyNeeds(proxied), landlockEnforces(7)).map((need) => need.capability)).toEqual([
      'network_by_domain',
    ]);
  });
});

describe('sandboxPlugin', () => {
  it('is a well-formed plugin whose settings table must be empty', async () => {
    expect(sandboxPluginProblem(sandboxPlugin)).toBeUndefined();
    expect(sandboxPlugin.id).toBe('landlock');
    expect(await landlockSettingsSchema['~standard'].validate({})).toEqual({ value: {} });
    const bad = await landlockSettingsSchema['~standard'].validate({ path: '/x' });
    expect('issues' in bad && bad.issues?.[0]?.message).toMatch(/unknown setting "path"/);
  });
});
