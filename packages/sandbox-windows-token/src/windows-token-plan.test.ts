import {
  type EffectivePolicy,
  type FileSystemEntry,
  InvalidArgumentsError,
  MissingCommandLineError,
  type SandboxPlanRequest,
  SandboxUnavailableError,
} from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { decodeLaunchSpec } from './launch-spec.js';
import { win32MemoryFsView } from './win32-memory-fs-view.js';
import { planWindowsToken, type WindowsTokenHostFacts } from './windows-token-plan.js';

const fs = win32MemoryFsView({ 'C:\\w\\.git\\config': '', 'C:\\w\\.git\\hooks\\': '', 'C:\\w\\sub\\': '' });
const facts: WindowsTokenHostFacts = { fs, nodePath: 'C:\\node.exe', launcherPath: 'C:\\ux\\launcher.js' };
const root: FileSystemEntry = { path: { type: 'special', value: 'root' }, access: 'read' };
const cwd: FileSystemEntry = { path: { type: 'special', value: 'cwd' }, access: 'write' };
const policy = (...entries: FileSystemEntry[]): EffectivePolicy => ({
  fileSystem: { kind: 'restricted', entries },
  network: 'restricted',
});
const request = (overrides: Partial<SandboxPlanRequest> = {}): SandboxPlanRequest => ({
  argv: ['cmd.exe', '/c', 'dir'],
  cwd: 'C:\\w',
  env: { Path: 'C:\\Windows' },
  policy: policy(root, cwd),
  tty: false,
  ...overrides,
});
const invalidMessage = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    expect(InvalidArgumentsError.isInstance(error)).toBe(true);
    return (error as Error).message;
  }
  throw new Error('expected an InvalidArgumentsError');
};

const unavailable = (run: () => unknown): SandboxUnavailableError => {
  try {
    run();
  } catch (error) {
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    return error as SandboxUnavailableError;
  }
  throw new Error('expected a SandboxUnavailableError');
};
const PROXY = { unixSocket: 'C:\\Users\\me\\.ux\\proxy.sock', loopbackPort: 43128 };

describe('planWindowsToken', () => {
  it('rejects an empty argv and a relative cwd, and accepts a POSIX-absolute one', () => {
    expect(() => planWindowsToken(request({ argv: [] }), facts)).toThrow(MissingCommandLineError);
    expect(invalidMessage(() => planWindowsToken(request({ cwd: 'w' }), facts))).toContain(
      'cwd: must be an absolute path',
    );
    expect(planWindowsToken(request({ cwd: '/tmp' }), facts).cwd).toBe('/tmp');
  });

  it('refuses what a write-restricted token cannot express, saying why', () => {
    expect(invalidMessage(() => planWindowsToken(request({ policy: policy(cwd) }), facts))).toContain(
      'restricted reads need the elevated',
    );
    expect(
      invalidMessage(() =>
        planWindowsToken(
          request({
            policy: policy(root, cwd, { path: { type: 'path', path: 'C:\\w\\secret' }, access: 'none' }),
          }),
          facts,
        ),
      ),
    ).toContain('deny-read entries (C:\\w\\secret) need the elevated Windows sandbox');
    expect(
      invalidMessage(() =>
        planWindowsToken(
          request({
            policy: policy(root, cwd, { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' }),
          }),
          facts,
        ),
      ),
    ).toContain('C:\\w\\**\\*.env');
    expect(
      invalidMessage(() =>
        planWindowsToken(
          request({ policy: policy(root, { path: { type: 'path', path: 'C:\\' }, access: 'write' }) }),
          facts,
        ),
      ),
    ).toContain('C:\\ is a whole drive');
    expect(invalidMessage(() => planWindowsToken(request({ argv: ['setup.bat'] }), facts))).toContain(
      'cmd.exe explicitly',
    );
  });

  it('keeps every variable of the request and adds its own', () => {
    const plan = planWindowsToken(
      request({ env: { Path: 'C:\\Windows', EMPTY: '', http_proxy: 'http://corp:8080' } }),
      facts,
    );
    expect(plan.env).toMatchObject({
      Path: 'C:\\Windows',
      EMPTY: '',
      http_proxy: 'http://corp:8080',
      UX_SANDBOX: 'windows-token',
    });
    expect(plan.env.HTTP_PROXY).toBeUndefined();
    expect(plan.enforcement.notes).toContain('already set and kept as given: http_proxy');
  });

  it('marks the network advisory when restricted, and the file system enforced', () => {
    expect(planWindowsToken(request(), facts).enforcement).toMatchObject({
      fileSystem: 'enforced',
      network: 'advisory',
    });
    expect(
      planWindowsToken(request({ policy: { ...policy(root, cwd), network: 'enabled' } }), facts).enforcement,
    ).toMatchObject({
      fileSystem: 'enforced',
      network: 'enforced',
    });
  });

  it('says what it does not limit with the network on: unix sockets and named pipes', () => {
    for (const fileSystem of [policy(root, cwd).fileSystem, { kind: 'unrestricted' as const }]) {
      const plan = planWindowsToken(request({ policy: { fileSystem, network: 'enabled' } }), facts);
      expect(plan.enforcement.network).toBe('enforced');
      expect(plan.enforcement.notes).toContain(
        'unix sockets (AF_UNIX) and named pipes are not limited by this backend beyond their own ACLs: with the network on, the command may connect to any the user can',
      );
    }
    // Off, the advisory note already says a program can still connect.
    expect(planWindowsToken(request(), facts).enforcement.notes.join('\n')).not.toContain('named pipes');
  });

  it('refuses a proxied network, with or without a file-system restriction, saying what to use instead', () => {
    for (const fileSystem of [policy(root, cwd).fileSystem, { kind: 'unrestricted' as const }]) {
      for (const networkProxy of [PROXY, { unixSocket: PROXY.unixSocket }]) {
        const error = unavailable(() =>
          planWindowsToken(request({ policy: { fileSystem, network: 'proxied', networkProxy } }), facts),
        );
        expect(error.backend).toBe('windows-token');
        expect(error.code).toBe('sandbox_unavailable');
        expect(error.reason).toMatch(
          /^network by domain \(network "proxied"\) is not supported on Windows yet: /,
        );
        expect(error.fix).toBe(
          'set the network "on" to allow every host, or "off" to allow none (advisory on Windows: proxies pointed at a closed port)',
        );
      }
    }
  });

  it('refuses a unix socket allow-list in every network mode, since it cannot keep the other sockets closed', () => {
    for (const fileSystem of [policy(root, cwd).fileSystem, { kind: 'unrestricted' as const }]) {
      for (const network of ['restricted', 'enabled'] as const) {
        const error = unavailable(() =>
          planWindowsToken(
            request({
              policy: { fileSystem, network, allowUnixSockets: ['C:\\Users\\me\\agent.sock'] },
            }),
            facts,
          ),
        );
        expect(error.backend).toBe('windows-token');
        expect(error.reason).toContain('allowUnixSockets: C:\\Users\\me\\agent.sock');
        expect(error.reason).toContain('is not supported on Windows');
        expect(error.fix).toContain('leave allowUnixSockets empty on Windows');
      }
    }
    // An empty list asks for nothing.
    expect(() =>
      planWindowsToken(request({ policy: { ...policy(root, cwd), allowUnixSockets: [] } }), facts),
    ).not.toThrow();
  });

  it('leaves the network of an external-sandbox command to the outer sandbox', () => {
    const plan = planWindowsToken(
      request({
        policy: {
          fileSystem: { kind: 'external-sandbox' },
          network: 'proxied',
          networkProxy: PROXY,
          allowUnixSockets: ['C:\\Users\\me\\agent.sock'],
        },
      }),
      facts,
    );
    expect(plan.argv).toEqual(['cmd.exe', '/c', 'dir']);
    expect(plan.enforcement).toMatchObject({ fileSystem: 'none', network: 'none' });
    expect(plan.envAdded).not.toHaveProperty('HTTP_PROXY');
  });

  it('passes the same plan through argv that it returns, and plans identically twice', () => {
    const plan = planWindowsToken(request({ tty: true }), facts);
    expect(decodeLaunchSpec(plan.argv[3]!)).toEqual(plan.launch);
    expect(plan.launch?.tty).toBe(true);
    expect(plan.argv.slice(4)).toEqual(['--', 'cmd.exe', '/c', 'dir']);
    expect(planWindowsToken(request({ tty: true }), facts)).toEqual(plan);
  });

  it('does not let a deeper writable root re-grant a carve-out (one predicate), and protects nothing outside the roots', () => {
    const plan = planWindowsToken(
      request({
        policy: policy(root, cwd, { path: { type: 'path', path: 'C:\\w\\.git\\hooks' }, access: 'write' }),
      }),
      facts,
    );
    // protectedEntryFor: C:\w protects C:\w\.git\hooks, so the deeper root gets no grant.
    expect(plan.aces.filter((ace) => ace.type === 'allow').map((ace) => ace.path)).toEqual(['C:\\w']);
    expect(plan.aces.some((ace) => ace.type === 'deny' && ace.path === 'C:\\w\\.git\\hooks')).toBe(true);
    expect(plan.aces.some((ace) => ace.type === 'deny' && ace.path === 'C:\\w\\.git\\config')).toBe(true);
    expect(plan.aces.every((ace) => ace.path.toLowerCase().startsWith('c:\\w'))).toBe(true);
    expect(plan.enforcement.notes).toContain(
      'writable root C:\\w\\.git\\hooks is itself protected (git hooks: programs the next git command runs on the host), so nothing was granted for it',
    );
    // The SID is that of the roots granted.
    expect(plan.capabilitySid).toBe(planWindowsToken(request(), facts).capabilitySid);
  });

  it("denies an outer root's protected names inside a deeper root too (the home's, for a workspace in .config)", () => {
    const home = win32MemoryFsView({
      'C:\\Users\\me\\.config\\git\\config': '',
      'C:\\Users\\me\\.config\\x\\': '',
    });
    const plan = planWindowsToken(
      request({
        cwd: 'C:\\Users\\me\\.config',
        env: { USERPROFILE: 'C:\\Users\\me' },
        policy: policy(root, cwd, { path: { type: 'path', path: 'C:\\Users\\me' }, access: 'write' }),
      }),
      { ...facts, fs: home },
    );
    // Before, the deeper root skipped it, and its inherited grant left .config\git writable.
    expect(plan.aces).toContainEqual(
      expect.objectContaining({ type: 'deny', path: 'C:\\Users\\me\\.config\\git', flags: 3 }),
    );
  });

  it('gives each set of roots its own capability SID', () => {
    const one = planWindowsToken(request(), facts).capabilitySid;
    const two = planWindowsToken(
      request({ policy: policy(root, cwd, { path: { type: 'path', path: 'C:\\w\\sub' }, access: 'write' }) }),
      facts,
    );
    expect(two.capabilitySid).not.toBe(one);
    expect(planWindowsToken(request(), { ...facts, sandboxId: 'other' }).capabilitySid).not.toBe(one);
  });

  it('runs an external-sandbox command as is, enforcing nothing', () => {
    const plan = planWindowsToken(
      request({ policy: { fileSystem: { kind: 'external-sandbox' }, network: 'restricted' } }),
      facts,
    );
    expect(plan.argv).toEqual(['cmd.exe', '/c', 'dir']);
    expect(plan.token).toBeNull();
    expect(plan.enforcement).toMatchObject({ fileSystem: 'none', network: 'none' });
  });
});
