import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EffectivePolicy, MissingCommandLineError, memoryFsView } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { type BwrapHost, LAUNCH_SCRIPT, launchScript, planBwrap } from './bwrap-plan.js';
import { classifyBwrapDenial } from './classify-bwrap-denial.js';
import { findBwrap } from './find-bwrap.js';
import { explainFailure } from './probe-bwrap.js';

const host = (entries: Record<string, string>): BwrapHost => ({
  bwrapPath: '/usr/bin/bwrap',
  shell: '/bin/bash',
  seccompFile: '/run/ux/seccomp.bpf',
  deniedFile: '/run/ux/denied',
  execShim: '/opt/ux/ux-sandbox-exec',
  fs: memoryFsView(entries),
  disableUserns: true,
});

const workspaceWrite = (
  extra: EffectivePolicy['fileSystem'] extends infer F
    ? F extends { entries: infer E }
      ? E
      : never
    : never = [],
  network: 'restricted' | 'enabled' = 'restricted',
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

const request = (policy: EffectivePolicy, tty = false) => ({
  argv: ['/bin/bash', '-c', 'make'],
  cwd: '/w',
  env: { PATH: '/usr/bin' },
  policy,
  tty,
});

describe('planBwrap', () => {
  it('wraps the command in the canonical order, with the seccomp program on fd 3', () => {
    const plan = planBwrap(
      request(workspaceWrite()),
      host({ '/w/.git/config': '', '/w/.git/hooks/': '', '/w/.git/info/exclude': '', '/w/src/': '' }),
    );
    expect(plan.argv.slice(0, 5)).toEqual([
      '/bin/bash',
      '-c',
      LAUNCH_SCRIPT,
      'ux-bwrap',
      '/run/ux/seccomp.bpf',
    ]);
    expect(plan.argv.slice(5)).toEqual([
      '/usr/bin/bwrap',
      '--die-with-parent',
      '--unshare-user',
      '--disable-userns',
      '--unshare-pid',
      '--unshare-ipc',
      '--unshare-uts',
      '--unshare-cgroup-try',
      '--unshare-net',
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--bind',
      '/w',
      '/w',
      '--bind',
      '/w/.git',
      '/w/.git',
      '--ro-bind',
      '/w/.git/config',
      '/w/.git/config',
      '--ro-bind',
      '/w/.git/hooks',
      '/w/.git/hooks',
      '--proc',
      '/proc',
      '--ro-bind',
      '/proc/sys',
      '/proc/sys',
      '--ro-bind',
      '/opt/ux/ux-sandbox-exec',
      '/opt/ux/ux-sandbox-exec',
      '--cap-drop',
      'ALL',
      '--chdir',
      '/w',
      '--seccomp',
      '3',
      '--',
      '/opt/ux/ux-sandbox-exec',
      '/bin/bash',
      '-c',
      'make',
    ]);
    // Nothing is bound where a protected name is missing: the host watches for it instead.
    expect(plan.guardTargets).toEqual([
      { dir: '/w/.git', name: 'config.worktree', why: expect.stringContaining('worktree') },
      { dir: '/w/.git', name: 'commondir', why: expect.stringContaining('where the repository') },
      { dir: '/w', name: '.ux', why: expect.stringContaining('agent metadata') },
      { dir: '/w', name: '.codex', why: expect.stringContaining('agent metadata') },
      { dir: '/w', name: '.agents', why: expect.stringContaining('agent metadata') },
    ]);
    expect(plan.env).toEqual({ PATH: '/usr/bin', UX_SANDBOX: 'bwrap', UX_SANDBOX_NETWORK_DISABLED: '1' });
  });

  it('keeps the command in the signalled process group: no new session, bwrap told to ignore Ctrl-C', () => {
    for (const tty of [false, true]) {
      const plan = planBwrap(request(workspaceWrite(), tty), host({ '/w/': '' }));
      expect(plan.argv).not.toContain('--new-session');
    }
    expect(LAUNCH_SCRIPT.startsWith("trap '' HUP INT QUIT TERM;")).toBe(true);
  });

  it('keeps exactly the descriptors the request names open for bwrap (ZshFork), and refuses others', () => {
    const plain = planBwrap(request(workspaceWrite()), host({ '/w/': '' }));
    expect(plain.argv[2]).toBe(LAUNCH_SCRIPT);
    expect(LAUNCH_SCRIPT).toContain('case $n in 0|1|2) ;;');
    const kept = planBwrap({ ...request(workspaceWrite()), keepFds: [63, 12, 63] }, host({ '/w/': '' }));
    expect(kept.argv[2]).toBe(launchScript([12, 63]));
    expect(kept.argv[2]).toContain('case $n in 0|1|2|12|63) ;;');
    expect(kept.argv.slice(3)).toEqual(plain.argv.slice(3));
    for (const bad of [3, 9, 1024, 1.5]) {
      expect(() => planBwrap({ ...request(workspaceWrite()), keepFds: [bad] }, host({ '/w/': '' }))).toThrow(
        /keepFds|10 to 1023/,
      );
    }
  });

  it('watches the parent of the first missing component, pinning it, and never binds over it', () => {
    const plan = planBwrap(request(workspaceWrite()), host({ '/w/': '', '/w/.git/config': '' }));
    expect(plan.guardTargets.map((t) => `${t.dir} ${t.name}`)).toEqual([
      '/w/.git config.worktree',
      '/w/.git hooks',
      '/w/.git commondir',
      '/w .ux',
      '/w .codex',
      '/w .agents',
    ]);
    const args = plan.argv.join(' ');
    expect(args).toContain('--bind /w/.git /w/.git');
    expect(args).not.toContain('/w/.ux');
    const fresh = planBwrap(request(workspaceWrite()), host({ '/w/': '' }));
    expect(fresh.guardTargets.map((t) => `${t.dir} ${t.name}`)).toContain('/w .git');
  });

  it('pins every directory between the root and a protected entry, so no parent can be renamed away', () => {
    const plan = planBwrap(
      request(workspaceWrite()),
      host({
        '/w/.git/config': '',
        '/w/.git/hooks/': '',
        '/w/.git/worktrees/x/commondir': '../..',
        '/w/.git/worktrees/x/gitdir': '/elsewhere/x/.git',
        '/w/.git/modules/libs/json/config': '',
      }),
    );
    const binds = plan.argv.join(' ');
    for (const dir of [
      '/w/.git',
      '/w/.git/worktrees',
      '/w/.git/worktrees/x',
      '/w/.git/modules',
      '/w/.git/modules/libs',
      '/w/.git/modules/libs/json',
    ])
      expect(binds).toContain(`--bind ${dir} ${dir} `);
    expect(binds).toContain('--ro-bind /w/.git/worktrees/x/commondir /w/.git/worktrees/x/commondir');
  });

  it("masks ux's own directories inside a writable root, and only there", () => {
    const plan = planBwrap(request(workspaceWrite()), {
      ...host({ '/w/': '', '/w/.uxhome/quarantine/': '', '/run/ux/': '' }),
      privateDirs: ['/w/.uxhome/quarantine', '/run/ux'],
    });
    const args = plan.argv.join(' ');
    expect(args).toContain('--perms 0000 --tmpfs /w/.uxhome/quarantine --remount-ro /w/.uxhome/quarantine');
    expect(args).not.toContain('--tmpfs /run/ux');
  });

  it('notes a missing deny-read path inside the workspace instead of binding over it', () => {
    const plan = planBwrap(
      request(workspaceWrite([{ path: { type: 'path', path: '/w/.env' }, access: 'none' }])),
      host({ '/w/': '' }),
    );
    expect(plan.argv.join(' ')).not.toContain('/w/.env');
    expect(plan.notes).toContain(
      'deny-read path /w/.env does not exist: it is not hidden if it is created while the command runs',
    );
  });

  it('keeps the terminal for tty commands, shares the network when enabled', () => {
    const plan = planBwrap(request(workspaceWrite([], 'enabled'), true), host({ '/w/': '' }));
    expect(plan.argv).not.toContain('--new-session');
    expect(plan.argv).not.toContain('--unshare-net');
    expect(plan.env).not.toHaveProperty('UX_SANDBOX_NETWORK_DISABLED');
  });

  it('masks deny-read directories (traversable when something below stays reachable) and files', () => {
    const plan = planBwrap(
      request(
        workspaceWrite([
          { path: { type: 'path', path: '/home' }, access: 'none' },
          { path: { type: 'path', path: '/w/.env' }, access: 'none' },
          { path: { type: 'path', path: '/opt/secrets' }, access: 'none' },
        ]),
      ),
      host({ '/home/u/': '', '/w/.env': 'KEY=1', '/opt/secrets/': '', '/w/.git/': '' }),
    );
    const args = plan.argv.join(' ');
    expect(args).toContain('--perms 0000 --tmpfs /home');
    expect(args).toContain('--perms 0000 --tmpfs /opt/secrets');
    expect(args).toContain('--ro-bind /run/ux/denied /w/.env');
    expect(args).toContain('--remount-ro /home --remount-ro /opt/secrets');
    const traversable = planBwrap(
      { ...request(workspaceWrite([{ path: { type: 'path', path: '/' }, access: 'none' }])), cwd: '/w' },
      host({ '/w/': '' }),
    );
    expect(traversable.argv.join(' ')).toContain('--perms 0111 --tmpfs /');
  });

  it('reads only the readable roots when reads are restricted', () => {
    const plan = planBwrap(
      request({
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'minimal' }, access: 'read' },
            { path: { type: 'special', value: 'cwd' }, access: 'write' },
          ],
        },
        network: 'restricted',
      }),
      host({ '/usr/bin/': '', '/etc/': '', '/w/': '' }),
    );
    const args = plan.argv.join(' ');
    expect(args).toContain('--tmpfs / --ro-bind /usr /usr --ro-bind /etc /etc --dev /dev --bind /w /w');
    expect(args).not.toContain('--ro-bind / /');
  });

  it("binds the zsh fork's execve wrapper when reads are restricted, so interception keeps working", () => {
    const restricted: EffectivePolicy = {
      fileSystem: {
        kind: 'restricted',
        entries: [
          { path: { type: 'special', value: 'minimal' }, access: 'read' },
          { path: { type: 'special', value: 'cwd' }, access: 'write' },
        ],
      },
      network: 'restricted',
    };
    const wrapper = '/opt/ux/build/ux-execve-wrapper';
    const withWrapper = { ...request(restricted), env: { PATH: '/usr/bin', EXEC_WRAPPER: wrapper } };
    const entries = { '/usr/bin/': '', '/w/': '', [wrapper]: '' };
    expect(planBwrap(withWrapper, host(entries)).argv.join(' ')).toContain(`--ro-bind ${wrapper} ${wrapper}`);
    // Not needed when the whole root is readable, nor for a wrapper that is not there.
    const readAll = { ...request(workspaceWrite()), env: withWrapper.env };
    expect(planBwrap(readAll, host(entries)).argv.join(' ')).not.toContain(`--ro-bind ${wrapper}`);
    expect(planBwrap(withWrapper, host({ '/usr/bin/': '', '/w/': '' })).argv.join(' ')).not.toContain(
      `--ro-bind ${wrapper}`,
    );
  });

  it('protects what a symlink points to and says the link itself can be replaced', () => {
    const plan = planBwrap(
      request(workspaceWrite()),
      host({ '/w/.git': '-> /w/real-git', '/w/real-git/config': '' }),
    );
    expect(plan.argv.join(' ')).toContain('--ro-bind /w/real-git /w/real-git');
    expect(plan.notes).toContain(
      '/w/.git is a symbolic link: what it points to is read-only, the link itself can be replaced',
    );
  });

  it('refuses an empty argv and a relative cwd', () => {
    expect(() => planBwrap({ ...request(workspaceWrite()), argv: [] }, host({}))).toThrow(
      MissingCommandLineError,
    );
    expect(() => planBwrap({ ...request(workspaceWrite()), cwd: 'w' }, host({}))).toThrow(
      'cwd: must be absolute, got "w"',
    );
  });
});

describe('findBwrap', () => {
  it('skips a bwrap inside the working directory and takes the next on PATH', () => {
    const dir = realpathSync(mkdtempSync(join(tmpdir(), 'ux-find-bwrap-')));
    try {
      mkdirSync(join(dir, 'repo', 'bin'), { recursive: true });
      mkdirSync(join(dir, 'system'));
      for (const bin of [join(dir, 'repo', 'bin', 'bwrap'), join(dir, 'system', 'bwrap')]) {
        writeFileSync(bin, '#!/bin/sh\n');
        chmodSync(bin, 0o755);
      }
      const path = [join(dir, 'repo', 'bin'), join(dir, 'system')].join(':');
      expect(findBwrap({ path, cwd: join(dir, 'repo') })).toEqual({ path: join(dir, 'system', 'bwrap') });
      expect(findBwrap({ path: join(dir, 'repo', 'bin'), cwd: join(dir, 'repo') })).toMatchObject({
        reason: expect.stringContaining('was not found on PATH'),
      });
      expect(findBwrap({ configured: 'bwrap' })).toEqual({
        reason: 'bwrap_path must be an absolute path, got "bwrap"',
      });
      expect(findBwrap({ configured: join(dir, 'repo') })).toEqual({
        reason: `bwrap_path ${join(dir, 'repo')} is not an executable file`,
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('classifyBwrapDenial', () => {
  it.each([
    [{ exitCode: 0, output: 'Permission denied' }, 'not_denied'],
    [{ exitCode: 1, output: "touch: cannot touch 'x': Read-only file system" }, 'denied'],
    [{ exitCode: 3, output: 'Error: connect ENETUNREACH' }, 'unknown'],
    [{ exitCode: 6, output: 'curl: (6) Could not resolve host: example.com' }, 'denied'],
    [{ exitCode: 159, output: '' }, 'denied'],
    [{ exitCode: 1, output: 'bwrap: Creating new namespace failed: Operation not permitted' }, 'not_denied'],
    [{ exitCode: 2, output: 'make: *** [all] Error 2' }, 'unknown'],
  ])('%j → %s', (evidence, verdict) => {
    expect(classifyBwrapDenial(evidence)).toBe(verdict);
  });
});

describe('explainFailure', () => {
  it.each([
    ['bwrap: setting up uid map: Permission denied', /AppArmor/, /apparmor_restrict_unprivileged_userns=0/],
    [
      'bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces',
      /user namespaces are not available/,
      /max_user_namespaces/,
    ],
    ["bwrap: Can't mount proc on /newroot/proc: Operation not permitted", /private \/proc/, /--privileged/],
  ])('%s', (stderr, reason, fix) => {
    const probe = explainFailure(stderr);
    expect(probe.reason).toMatch(reason);
    expect(probe.fix).toMatch(fix);
  });
});
