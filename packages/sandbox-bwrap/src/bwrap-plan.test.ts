import { chmodSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EffectivePolicy, MissingCommandLineError, SandboxUnavailableError } from '@ux/protocol';
import { memoryFsView, PROXY_BRIDGE_PORT, proxyEnvironment } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { type BwrapHost, launcherArgv, planBwrap, type SeccompFilterKind } from './bwrap-plan.js';
import { classifyBwrapDenial } from './classify-bwrap-denial.js';
import { findBwrap } from './find-bwrap.js';
import { explainFailure } from './probe-bwrap.js';

/** A seccomp program (one `RET ALLOW`): the plan carries its bytes, not a file name. */
const PROGRAM = Uint8Array.from([0x06, 0, 0, 0, 0, 0, 0xff, 0x7f]);
const LAUNCHER = ['/opt/ux/ux-sandbox-exec', '--launch', '--seccomp-program', '060000000000ff7f', '--'];

const host = (entries: Record<string, string>): BwrapHost => ({
  bwrapPath: '/usr/bin/bwrap',
  seccompProgram: PROGRAM,
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
    // The launcher carries the program itself (into a sealed memfd on fd 3): no file, no shell.
    expect(plan.argv.slice(0, 5)).toEqual(LAUNCHER);
    expect(plan.argv.slice(0, 5)).toEqual(launcherArgv('/opt/ux/ux-sandbox-exec', PROGRAM));
    expect(plan.argv.some((arg) => arg.endsWith('.bpf'))).toBe(false);
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
      '--ro-bind',
      '/opt/ux/ux-sandbox-exec',
      '/opt/ux/ux-sandbox-exec',
      '--proc',
      '/proc',
      '--ro-bind',
      '/proc/sys',
      '/proc/sys',
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

  it('keeps the command in the signalled process group: no new session, bwrap started through the launcher', () => {
    for (const tty of [false, true]) {
      const plan = planBwrap(request(workspaceWrite(), tty), host({ '/w/': '' }));
      expect(plan.argv).not.toContain('--new-session');
      // The launcher (ux-sandbox-exec --launch) sets HUP/INT/QUIT/TERM to "ignore" before it execs bwrap.
      expect(plan.argv.slice(0, 2)).toEqual(['/opt/ux/ux-sandbox-exec', '--launch']);
      expect(plan.argv[LAUNCHER.length]).toBe('/usr/bin/bwrap');
    }
  });

  it('keeps exactly the descriptors the request names open for bwrap (ZshFork), and refuses others', () => {
    const plain = planBwrap(request(workspaceWrite()), host({ '/w/': '' }));
    expect(plain.argv).not.toContain('--keep-fd');
    const kept = planBwrap({ ...request(workspaceWrite()), keepFds: [63, 12, 63] }, host({ '/w/': '' }));
    expect(kept.argv.slice(0, 9)).toEqual([
      '/opt/ux/ux-sandbox-exec',
      '--launch',
      '--keep-fd',
      '12',
      '--keep-fd',
      '63',
      '--seccomp-program',
      '060000000000ff7f',
      '--',
    ]);
    expect(kept.argv.slice(9)).toEqual(plain.argv.slice(LAUNCHER.length));
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

  it("masks ux's own directories wherever the command could see them, and only there", () => {
    const plan = planBwrap(request(workspaceWrite()), {
      ...host({
        '/w/': '',
        '/w/.uxhome/quarantine/': '',
        '/run/user/0/ux/': '',
        '/tmp/ux-0/bwrap-1-ab/': '',
      }),
      privateDirs: ['/w/.uxhome/quarantine', '/run/user/0/ux', '/tmp/ux-0', '/tmp/ux-0/bwrap-1-ab', '/gone'],
    });
    const args = plan.argv.join(' ');
    // Inside a writable root and outside one (everything is readable): masked, read-only, unlistable.
    for (const dir of ['/w/.uxhome/quarantine', '/run/user/0/ux', '/tmp/ux-0'])
      expect(args).toContain(`--perms 0000 --tmpfs ${dir} `);
    expect(args).toMatch(/--remount-ro \/tmp\/ux-0 .*--remount-ro \/run\/user\/0\/ux/);
    expect(args).toContain('--remount-ro /w/.uxhome/quarantine');
    // Inside another mask there is nothing to mask; a missing directory is not made.
    expect(args).not.toContain('--tmpfs /tmp/ux-0/bwrap-1-ab');
    expect(args).not.toContain('/gone');
    // Nothing of a repository found inside the quarantine is pinned or bound: it stays hidden.
    const quarantined = planBwrap(
      request({ ...workspaceWrite(), knownRepositories: ['/w/.uxhome/quarantine/x'] }),
      {
        ...host({
          '/w/': '',
          '/w/.uxhome/quarantine/x/.git/config': '',
          '/w/.uxhome/quarantine/x/.git/hooks/': '',
        }),
        privateDirs: ['/w/.uxhome/quarantine'],
      },
    );
    const quarantinedArgs = quarantined.argv.join(' ');
    expect(quarantinedArgs).toContain('--perms 0000 --tmpfs /w/.uxhome/quarantine ');
    expect(quarantinedArgs).not.toMatch(/bind \/w\/\.uxhome\/quarantine\//);
    // (Its own path and its parent may be pinned: then the mask goes over the pin.)
    expect(quarantinedArgs).toContain(
      '--bind /w/.uxhome/quarantine /w/.uxhome/quarantine --perms 0000 --tmpfs /w/.uxhome/quarantine ',
    );
    // The layout's hidden list (EffectivePolicy.hostState.hidden) is masked the same way.
    const hidden = planBwrap(
      request({ ...workspaceWrite(), hostState: { hidden: ['/srv/ux-state'] } }),
      host({ '/w/': '', '/srv/ux-state/': '' }),
    );
    expect(hidden.argv.join(' ')).toContain('--perms 0000 --tmpfs /srv/ux-state ');
    // Under restricted reads, a directory nothing shows is left alone (no directory made inside).
    const minimal = planBwrap(
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
      { ...host({ '/usr/bin/': '', '/w/': '', '/run/user/0/ux/': '' }), privateDirs: ['/run/user/0/ux'] },
    );
    expect(minimal.argv.join(' ')).not.toContain('/run/user/0/ux');
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
    expect(args).toMatch(/--remount-ro \/home --remount-ro \/opt\/secrets --proc/);
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

  it('recreates the merged-/usr links (/bin, /lib64, …) when reads are restricted, or nothing could run', () => {
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
      host({
        '/usr/bin/': '',
        '/usr/lib64/': '',
        '/etc/': '',
        '/w/': '',
        '/bin': '-> /usr/bin',
        '/lib64': '-> /usr/lib64',
      }),
    );
    const args = plan.argv.join(' ');
    expect(args).toContain(
      '--tmpfs / --ro-bind /usr/bin /usr/bin --ro-bind /usr /usr --ro-bind /etc /etc --ro-bind /usr/lib64 /usr/lib64 --symlink /usr/bin /bin --symlink /usr/lib64 /lib64 --dev /dev',
    );
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
    // With the whole root readable it is bound read-only too (a host path: never writable), but not
    // a wrapper that is not there.
    const readAll = { ...request(workspaceWrite()), env: withWrapper.env };
    expect(planBwrap(readAll, host(entries)).argv.join(' ')).toContain(`--ro-bind ${wrapper} ${wrapper}`);
    expect(planBwrap(withWrapper, host({ '/usr/bin/': '', '/w/': '' })).argv.join(' ')).not.toContain(
      `--ro-bind ${wrapper}`,
    );
  });

  it('keeps a protected link (the guard makes it again when replaced) and protects what it points to', () => {
    const plan = planBwrap(
      request(workspaceWrite()),
      host({ '/w/.git': '-> real-git', '/w/real-git/config': '', '/w/deep/dir/x': '' }),
    );
    expect(plan.argv.join(' ')).toContain('--ro-bind /w/real-git /w/real-git');
    expect(plan.guardTargets).toContainEqual({
      dir: '/w',
      name: '.git',
      link: 'real-git',
      why: 'git directory link',
    });
    expect(plan.notes).toContain(
      '/w/.git is a symbolic link: it is kept (whatever a command puts in its place is taken away and the link made again), and what it points to (/w/real-git) is read-only',
    );
    // What the link points to cannot be moved from under it: every directory up to the root is pinned.
    const deep = planBwrap(
      request(workspaceWrite()),
      host({ '/w/.git': '-> deep/dir/real-git', '/w/deep/dir/real-git/config': '' }),
    );
    const args = deep.argv.join(' ');
    expect(args).toContain('--ro-bind /w/deep/dir/real-git /w/deep/dir/real-git');
    for (const dir of ['/w/deep', '/w/deep/dir']) expect(args).toContain(`--bind ${dir} ${dir} `);
  });

  it('a missing name below missing directories is one chain target from the deepest existing directory', () => {
    const home = (entries: Record<string, string>) => ({ ...host(entries), homeDir: '/w' });
    const fresh = planBwrap(request(workspaceWrite()), home({ '/w/.bashrc': '', '/w/.profile': '' }));
    const targets = fresh.guardTargets.map((t) => `${t.dir} ${t.name}`);
    expect(targets).toEqual(
      expect.arrayContaining([
        '/w .config/git',
        '/w .local/bin',
        '/w .local/share/systemd',
        '/w .config/fish',
      ]),
    );
    // Never the shallowest missing name alone: .config and .local stay the command's to make.
    expect(targets).not.toContain('/w .config');
    expect(targets).not.toContain('/w .local');
    // With .config there, the chain starts inside it (and the directory is pinned).
    const withConfig = planBwrap(
      request(workspaceWrite()),
      home({ '/w/.config/': '', '/w/.local/share/': '' }),
    );
    const more = withConfig.guardTargets.map((t) => `${t.dir} ${t.name}`);
    expect(more).toEqual(
      expect.arrayContaining(['/w/.config git', '/w/.local/share systemd', '/w/.local bin']),
    );
    expect(withConfig.argv.join(' ')).toContain('--bind /w/.config /w/.config ');
    // A file where a directory is needed: the chain goes through it (the guard waits for a directory).
    const file = planBwrap(request(workspaceWrite()), home({ '/w/.config': 'not a directory' }));
    expect(file.guardTargets.map((t) => `${t.dir} ${t.name}`)).toContain('/w .config/git');
  });

  it('a directory on the way that is a link: the link is kept and the chain starts where it leads', () => {
    const home = (entries: Record<string, string>) => ({ ...host(entries), homeDir: '/w' });
    const stow = planBwrap(
      request(workspaceWrite()),
      home({ '/w/.config': '-> dotfiles/config', '/w/dotfiles/config/nvim/init.vim': '' }),
    );
    const targets = stow.guardTargets.map((t) => `${t.dir} ${t.name}${t.link ? ` -> ${t.link}` : ''}`);
    expect(targets).toContain('/w .config -> dotfiles/config');
    expect(stow.guardTargets.find((t) => t.link)?.why).toMatch(/^the way to \/w\/\.config\/\S+: /);
    expect(targets).toContain('/w/dotfiles/config git');
    expect(targets).not.toContain('/w .config/git');
    // An existing name through the link is bound at its real path, its directories pinned.
    const args = stow.argv.join(' ');
    expect(args).toContain('--ro-bind /w/dotfiles/config/nvim /w/dotfiles/config/nvim');
    expect(args).toContain('--bind /w/dotfiles/config /w/dotfiles/config ');
    // A dangling link on the way: kept, and the chain follows its text.
    const dangling = planBwrap(request(workspaceWrite()), home({ '/w/.config': '-> gone/config' }));
    const dangled = dangling.guardTargets.map((t) => `${t.dir} ${t.name}${t.link ? ` -> ${t.link}` : ''}`);
    expect(dangled).toEqual(expect.arrayContaining(['/w .config -> gone/config', '/w gone/config/git']));
    // A link that leads out of every writable root: kept; nothing can be created where it leads.
    const out = planBwrap(request(workspaceWrite()), home({ '/w/.config': '-> /etc/xdg', '/etc/xdg/': '' }));
    const outTargets = out.guardTargets.map((t) => `${t.dir} ${t.name}${t.link ? ` -> ${t.link}` : ''}`);
    expect(outTargets).toContain('/w .config -> /etc/xdg');
    expect(outTargets.some((t) => t.startsWith('/etc'))).toBe(false);
  });

  it('private /tmp: the session directory at /tmp first, a workspace in /tmp on top, TMPDIR=/tmp', () => {
    const tmpPolicy = (privateTmp: boolean): EffectivePolicy => ({
      ...workspaceWrite([{ path: { type: 'special', value: 'slash_tmp' }, access: 'write' }]),
      privateTmp,
    });
    const entries = { '/tmp/ws/': '', '/tmp/ux-0/bwrap-1-ab/tmp/': '', '/run/user/0/ux/': '' };
    const sessionHost: BwrapHost = {
      ...host(entries),
      privateTmp: '/tmp/ux-0/bwrap-1-ab/tmp',
      privateDirs: ['/run/user/0/ux', '/tmp/ux-0'],
    };
    const req = {
      ...request(tmpPolicy(true)),
      cwd: '/tmp/ws',
      env: { PATH: '/usr/bin', TMPDIR: '/var/tmp/u' },
    };
    const plan = planBwrap(req, sessionHost);
    const args = plan.argv.join(' ');
    expect(plan.layout.privateTmp).toBe(true);
    expect(plan.layout.writableRoots.map((root) => root.root)).toEqual(['/tmp/ws']);
    expect(args).toContain('--dev /dev --bind /tmp/ux-0/bwrap-1-ab/tmp /tmp --bind /tmp/ws /tmp/ws ');
    // The runtime root in /tmp is out of sight already (the private /tmp replaces /tmp); the other is masked.
    expect(args).not.toContain('--tmpfs /tmp/ux-0');
    expect(args).toContain('--perms 0000 --tmpfs /run/user/0/ux ');
    expect(plan.env.TMPDIR).toBe('/tmp');
    expect(plan.notes.join('\n')).toContain(
      '/tmp is private to this session (TMPDIR=/tmp): its commands share it, nothing outside the sandbox reads it, and it is removed when the session ends; on the host it is /tmp/ux-0/bwrap-1-ab/tmp',
    );
    // Off: exactly as before — the host's /tmp is a writable root, every runtime root in sight masked.
    const shared = planBwrap({ ...req, policy: tmpPolicy(false) }, sessionHost);
    const sharedArgs = shared.argv.join(' ');
    expect(shared.layout.writableRoots.map((root) => root.root)).toEqual(['/tmp', '/tmp/ws']);
    expect(sharedArgs).not.toContain('/bwrap-1-ab/tmp /tmp');
    expect(sharedArgs).toContain('--bind /tmp /tmp');
    expect(sharedArgs).toContain('--perms 0000 --tmpfs /tmp/ux-0 ');
    expect(shared.env.TMPDIR).toBe('/var/tmp/u');
    expect(shared.notes.join('\n')).not.toContain('private to this session');
    // A plan that needs a private /tmp and has no directory for it is refused, not run on the host's.
    expect(() => planBwrap(req, host(entries))).toThrow(SandboxUnavailableError);
    expect(() => planBwrap(req, host(entries))).toThrow(/private \/tmp/);
  });

  it('hostPaths: read-only at their canonical paths, after the masks and the private /tmp above them', () => {
    const entries = {
      '/w/': '',
      '/w/tools/shim.sh': '',
      '/tmp/ux-0/exec-server-7-cd/snapshot.sh': '',
      '/tmp/ux-0/bwrap-1-ab/tmp/': '',
      '/tmp/legacy/snap.sh': '',
      '/opt/link.sh': '-> /w/tools/shim.sh',
    };
    const hostPaths = [
      '/tmp/ux-0/exec-server-7-cd/snapshot.sh',
      '/tmp/legacy/snap.sh',
      '/opt/link.sh',
      '/gone/snap.sh',
      'relative.sh',
    ];
    const shared = planBwrap(
      {
        ...request(workspaceWrite([{ path: { type: 'special', value: 'slash_tmp' }, access: 'write' }])),
        hostPaths,
      },
      { ...host(entries), privateDirs: ['/tmp/ux-0'] },
    );
    const args = shared.argv.join(' ');
    // The runtime root stays masked (traversable: something below must be reached), the file shows.
    expect(args).toContain(
      '--perms 0111 --tmpfs /tmp/ux-0 --ro-bind /opt/ux/ux-sandbox-exec /opt/ux/ux-sandbox-exec --ro-bind /tmp/legacy/snap.sh /tmp/legacy/snap.sh --ro-bind /w/tools/shim.sh /w/tools/shim.sh --ro-bind /tmp/ux-0/exec-server-7-cd/snapshot.sh /tmp/ux-0/exec-server-7-cd/snapshot.sh --remount-ro /tmp/ux-0',
    );
    expect(shared.notes).toContain(
      'host path /gone/snap.sh does not exist or is not absolute: it is not bound',
    );
    expect(shared.notes).toContain(
      'host path relative.sh does not exist or is not absolute: it is not bound',
    );
    const isolated = planBwrap(
      {
        ...request({
          ...workspaceWrite([{ path: { type: 'special', value: 'slash_tmp' }, access: 'write' }]),
          privateTmp: true,
        }),
        hostPaths,
      },
      { ...host(entries), privateDirs: ['/tmp/ux-0'], privateTmp: '/tmp/ux-0/bwrap-1-ab/tmp' },
    );
    const isolatedArgs = isolated.argv.join(' ');
    const tmpAt = isolatedArgs.indexOf('--bind /tmp/ux-0/bwrap-1-ab/tmp /tmp ');
    expect(tmpAt).toBeGreaterThan(0);
    for (const path of ['/tmp/legacy/snap.sh', '/tmp/ux-0/exec-server-7-cd/snapshot.sh'])
      expect(isolatedArgs.indexOf(`--ro-bind ${path} ${path}`)).toBeGreaterThan(tmpAt);
  });

  it('host programs inside a writable root are read-only, their directories pinned up to the outermost root', () => {
    const entries = {
      '/home/u/': '',
      '/home/u/ws/': '',
      '/home/u/ux/native/build/ux-sandbox-exec': '',
      '/home/u/ux/native/build/ux-path-guard': '',
      '/home/u/bin/bwrap': '',
    };
    const programHost: BwrapHost = {
      ...host(entries),
      bwrapPath: '/home/u/bin/bwrap',
      execShim: '/home/u/ux/native/build/ux-sandbox-exec',
      hostPrograms: ['/home/u/ux/native/build/ux-path-guard', '/home/u/bin/bwrap', '/usr/bin/true'],
    };
    const plan = planBwrap(
      {
        ...request(workspaceWrite([{ path: { type: 'path', path: '/home/u' }, access: 'write' }])),
        cwd: '/home/u/ws',
      },
      programHost,
    );
    const args = plan.argv.join(' ');
    for (const dir of ['/home/u/ux', '/home/u/ux/native', '/home/u/ux/native/build', '/home/u/bin'])
      expect(args).toContain(`--bind ${dir} ${dir} `);
    for (const program of [
      '/home/u/ux/native/build/ux-sandbox-exec',
      '/home/u/ux/native/build/ux-path-guard',
      '/home/u/bin/bwrap',
    ])
      expect(args.split(`--ro-bind ${program} ${program} `).length).toBe(2);
    // Outside every writable root nothing is bound for them (the shim excepted: it runs inside).
    expect(args).not.toContain('/usr/bin/true');
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

describe('planBwrap: network modes', () => {
  const PROXY = '/run/ux/net/proxy.sock';
  const files = { '/w/': '', [PROXY]: '', '/run/user/1000/agent.sock': '', '/var/run': '-> /run' };
  const networkHost = (entries: Record<string, string> = files) => {
    const asked: SeccompFilterKind[] = [];
    const value: BwrapHost = {
      ...host(entries),
      seccompProgram: (kind) => {
        asked.push(kind);
        return Uint8Array.of(asked.length, 0, 0, 0, 0, 0, 0, 0);
      },
      isSocket: (path) => path.endsWith('.sock'),
    };
    return { host: value, asked };
  };
  const policy = (
    network: EffectivePolicy['network'],
    extra: Partial<EffectivePolicy> = {},
    reads: 'all' | 'restricted' = 'all',
  ): EffectivePolicy => ({
    fileSystem: {
      kind: 'restricted',
      entries: [
        ...(reads === 'all'
          ? [{ path: { type: 'special' as const, value: 'root' as const }, access: 'read' as const }]
          : []),
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
      ],
    },
    network,
    ...extra,
  });
  /** What bwrap runs after `--`, and the bwrap arguments before it (after the launcher's). */
  const split = (argv: string[]) => {
    const start = argv.indexOf('--') + 2;
    const end = argv.indexOf('--', start);
    return { bwrap: argv.slice(start, end), payload: argv.slice(end + 1) };
  };

  it('proxied: no network namespace peers, the proxy socket bound in, the bridge in ux-sandbox-exec, which loads the filter', () => {
    const { host: h, asked } = networkHost();
    const plan = planBwrap(request(policy('proxied', { networkProxy: { unixSocket: PROXY } })), h);
    const { bwrap, payload } = split(plan.argv);
    expect(plan.argv.slice(2, 4)).toEqual(['--seccomp-program', '0100000000000000']);
    expect(asked).toEqual([{ network: 'proxied', superviseConnect: false }]);
    expect(bwrap).toContain('--unshare-net');
    expect(bwrap).not.toContain('--seccomp');
    // The socket is bound onto itself (it exists: nothing is created) in depth order with the masks, so
    // a mask above it (ux's runtime root holds it) is traversable and made before it turns read-only;
    // ux-sandbox-exec is the namespace's init: bwrap's own would run unfiltered.
    const joined = bwrap.join(' ');
    expect(joined).toContain(`--ro-bind ${PROXY} ${PROXY}`);
    expect(joined.indexOf(`--ro-bind ${PROXY} ${PROXY}`)).toBeLessThan(joined.indexOf('--proc /proc'));
    expect(bwrap.slice(-5)).toEqual(['--cap-drop', 'ALL', '--chdir', '/w', '--as-pid-1']);
    expect(payload).toEqual([
      '/opt/ux/ux-sandbox-exec',
      '--seccomp-fd',
      '3',
      '--bridge',
      `${PROXY_BRIDGE_PORT}=${PROXY}`,
      '--',
      '/bin/bash',
      '-c',
      'make',
    ]);
    expect(plan.env).toEqual({
      PATH: '/usr/bin',
      UX_SANDBOX: 'bwrap',
      ...proxyEnvironment({ httpPort: PROXY_BRIDGE_PORT, platform: 'linux' }),
      UX_SANDBOX_NETWORK: 'proxied',
    });
    expect(plan.env.HTTPS_PROXY).toBe('http://127.0.0.1:3128');
    expect(plan.env.ALL_PROXY).toBe('socks5h://127.0.0.1:3128');
    expect(plan.env).not.toHaveProperty('UX_SANDBOX_NETWORK_DISABLED');
    expect(plan.notes.join('\n')).toMatch(/network is proxied: the only way out is the host's proxy/);
    expect(plan.notes.join('\n')).toMatch(/SCM_RIGHTS/);
  });

  it('proxied: the proxy variables replace any the request brought', () => {
    const { host: h } = networkHost();
    const plan = planBwrap(
      {
        ...request(policy('proxied', { networkProxy: { unixSocket: PROXY } })),
        env: {
          PATH: '/usr/bin',
          HTTPS_PROXY: 'http://corp:8080',
          https_proxy: 'http://corp:8080',
          NO_PROXY: '*',
        },
      },
      h,
    );
    expect(plan.env.HTTPS_PROXY).toBe('http://127.0.0.1:3128');
    expect(plan.env.https_proxy).toBe('http://127.0.0.1:3128');
    expect(plan.env.NO_PROXY).not.toBe('*');
  });

  it('proxied: a socket path through a symbolic link is bound and bridged at its real path', () => {
    const { host: h } = networkHost({ ...files, '/run/docker-proxy.sock': '', '/var/run': '-> /run' });
    const plan = planBwrap(
      request(policy('proxied', { networkProxy: { unixSocket: '/var/run/docker-proxy.sock' } })),
      h,
    );
    const { bwrap, payload } = split(plan.argv);
    expect(bwrap.join(' ')).toContain('--ro-bind /run/docker-proxy.sock /run/docker-proxy.sock');
    expect(payload).toContain(`${PROXY_BRIDGE_PORT}=/run/docker-proxy.sock`);
  });

  it('proxied without the proxy socket on the host is refused before anything runs', () => {
    const { host: h } = networkHost({ '/w/': '', '/run/ux/net/': '' });
    const missing = () => planBwrap(request(policy('proxied', { networkProxy: { unixSocket: PROXY } })), h);
    expect(missing).toThrow(SandboxUnavailableError);
    expect(missing).toThrow(`${PROXY} does not exist`);
    const notSocket = () =>
      planBwrap(request(policy('proxied', { networkProxy: { unixSocket: '/run/ux/net' } })), h);
    expect(notSocket).toThrow('/run/ux/net is not a socket');
    // And a proxied policy without any endpoint is invalid in the first place.
    expect(() => planBwrap(request(policy('proxied')), h)).toThrow(/networkProxy\.unixSocket/);
  });

  it('enabled: bwrap loads the filter (unix sockets refused in it), nothing else changes', () => {
    const { host: h, asked } = networkHost();
    const plan = planBwrap(request(policy('enabled')), h);
    const { bwrap, payload } = split(plan.argv);
    expect(asked).toEqual([{ network: 'enabled', superviseConnect: false }]);
    expect(bwrap).not.toContain('--unshare-net');
    expect(bwrap.slice(-6)).toEqual(['--cap-drop', 'ALL', '--chdir', '/w', '--seccomp', '3']);
    expect(bwrap).not.toContain('--as-pid-1');
    expect(payload).toEqual(['/opt/ux/ux-sandbox-exec', '/bin/bash', '-c', 'make']);
    expect(plan.env).toEqual({ PATH: '/usr/bin', UX_SANDBOX: 'bwrap' });
    expect(plan.notes.join('\n')).toMatch(/socket\(AF_UNIX\) is refused/);
  });

  it('allowUnixSockets: ux-sandbox-exec supervises connect (IP too where the mode has it) and loads the filter', () => {
    const listed = ['/run/user/1000/agent.sock', '/run/user/1000/missing.sock'];
    for (const network of ['enabled', 'proxied', 'restricted'] as const) {
      const { host: h, asked } = networkHost();
      const plan = planBwrap(
        request(policy(network, { allowUnixSockets: listed, networkProxy: { unixSocket: PROXY } })),
        h,
      );
      const { bwrap, payload } = split(plan.argv);
      expect(asked).toEqual([{ network, superviseConnect: true }]);
      expect(bwrap).not.toContain('--seccomp');
      expect(bwrap.at(-1)).toBe('--as-pid-1');
      expect(payload).toEqual([
        '/opt/ux/ux-sandbox-exec',
        '--seccomp-fd',
        '3',
        ...(network === 'proxied' ? ['--bridge', `${PROXY_BRIDGE_PORT}=${PROXY}`] : []),
        '--allow-unix',
        listed[0],
        '--allow-unix',
        listed[1],
        ...(network === 'restricted' ? [] : ['--connect-ip']),
        '--',
        '/bin/bash',
        '-c',
        'make',
      ]);
      // Each listed socket that exists is bound at its own path (a private /tmp or a mask could hide
      // it otherwise); a missing one is not.
      expect(bwrap.join(' ')).toContain('--ro-bind /run/user/1000/agent.sock /run/user/1000/agent.sock');
      expect(bwrap.join(' ')).not.toContain('missing.sock');
      expect(plan.notes.join('\n')).toContain(`only ${listed.join(', ')}`);
    }
  });

  it('allowUnixSockets under restricted reads: an existing socket is bound at its real path, a missing one noted', () => {
    const { host: h } = networkHost();
    const plan = planBwrap(
      request(
        policy(
          'restricted',
          {
            allowUnixSockets: [
              '/run/user/1000/agent.sock',
              '/var/run/gone.sock',
              '/var/run/user/1000/agent.sock',
            ],
          },
          'restricted',
        ),
      ),
      h,
    );
    const { bwrap } = split(plan.argv);
    expect(bwrap.join(' ')).toContain('--tmpfs /');
    expect(bwrap.join(' ')).toContain('--ro-bind /run/user/1000/agent.sock /run/user/1000/agent.sock');
    expect(bwrap.slice(-5)).toEqual(['--cap-drop', 'ALL', '--chdir', '/w', '--as-pid-1']);
    expect(bwrap.filter((arg) => arg.endsWith('agent.sock'))).toEqual([
      '/run/user/1000/agent.sock',
      '/run/user/1000/agent.sock',
    ]);
    const notes = plan.notes.join('\n');
    expect(notes).toContain('allowed unix socket /var/run/gone.sock does not exist');
    expect(notes).toContain(
      'allowed unix socket /var/run/user/1000/agent.sock is reached through a symbolic link: inside, only its real path /run/user/1000/agent.sock exists',
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
        reason: '[sandbox.bwrap] path must be an absolute path, got "bwrap"',
      });
      expect(findBwrap({ configured: join(dir, 'repo') })).toEqual({
        reason: `[sandbox.bwrap] path ${join(dir, 'repo')} is not an executable file`,
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
    [
      {
        exitCode: 125,
        output: 'ux: sandbox setup failed: cannot install the seccomp filter: Operation not permitted\n',
      },
      'not_denied',
    ],
    [{ exitCode: 1, output: 'curl: (56) CONNECT tunnel failed, response 403' }, 'unknown'],
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

describe('planBwrap: the one protected-path predicate', () => {
  it('does not grant a writable root that lies in a name another root protects', () => {
    const plan = planBwrap(
      {
        argv: ['/bin/true'],
        cwd: '/w',
        env: {},
        tty: false,
        policy: {
          fileSystem: {
            kind: 'restricted',
            entries: [
              { path: { type: 'special', value: 'root' }, access: 'read' },
              { path: { type: 'special', value: 'cwd' }, access: 'write' },
              { path: { type: 'path', path: '/w/.git/hooks' }, access: 'write' },
            ],
          },
          network: 'restricted',
        },
      },
      host({ '/w/.git/config': '', '/w/.git/hooks/': '' }),
    );
    const args = plan.argv.join(' ');
    expect(args).toContain('--ro-bind /w/.git/hooks /w/.git/hooks');
    expect(args).not.toContain('--bind /w/.git/hooks /w/.git/hooks');
    expect(plan.notes.join('\n')).toMatch(/writable root \/w\/\.git\/hooks lies in a protected path/);
  });
});
