// The escape battery: workspace-write, network off, a root user inside. Every probe that must be
// blocked also checks the host side (the file really is absent, the listener really saw nothing).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type EffectivePolicy, effectivePolicyFromSandboxPolicy, type SandboxNotice } from '@ux/protocol';
import { isAlive, runToEnd, waitUntilDead } from '@ux/protocol-testing';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const backend = createBwrapSandbox();
const spawner = createLocalSpawner();
const PATH = '/usr/local/bin:/usr/bin:/bin';
let root: string;
let ws: string;
let outside: string;
let probe: string;
let gitConfigBefore: string;

const policy = (overrides: { network?: boolean; slashTmp?: boolean } = {}): EffectivePolicy =>
  effectivePolicyFromSandboxPolicy({
    type: 'workspace-write',
    writable_roots: [],
    network_access: overrides.network ?? false,
    exclude_tmpdir_env_var: true,
    exclude_slash_tmp: !(overrides.slashTmp ?? false),
  });

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'ux-escape-')));
  ws = join(root, 'workspace');
  outside = join(root, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', ws, '-c', 'user.name=ux', '-c', 'user.email=ux@example.invalid', ...args], {
      stdio: 'ignore',
    });
  git('init', '-q');
  writeFileSync(join(ws, 'README'), 'hello\n');
  git('add', 'README');
  git('commit', '-q', '-m', 'first');
  gitConfigBefore = readFileSync(join(ws, '.git', 'config'), 'utf8');
  probe = join(outside, 'escape-probe');
  execFileSync('cc', [
    '-O1',
    '-o',
    probe,
    fileURLToPath(new URL('../fixtures/escape-probe.c', import.meta.url)),
  ]);
  await warmUpSpawner(spawner);
}, 60_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));
useLeakCheck();
// Registered after the leak check, so it runs first: the backend's path guard is not a leak.
afterAll(() => backend.close());

async function sandboxed(
  script: string,
  options: { network?: boolean; slashTmp?: boolean; tty?: boolean; env?: Record<string, string> } = {},
) {
  const plan = await backend.plan({
    argv: ['/bin/bash', '-c', script],
    cwd: ws,
    env: { PATH, HOME: process.env.HOME ?? '/root', ...options.env },
    policy: policy(options),
    tty: options.tty ?? false,
  });
  const notices: SandboxNotice[] = [];
  plan.onNotice?.((notice) => notices.push(notice));
  try {
    const child = await spawner.spawn({
      argv: plan.argv,
      cwd: plan.cwd,
      env: plan.env,
      tty: options.tty ?? false,
      stdin: 'closed',
    });
    const { status, text } = await runToEnd(child, 20_000);
    await plan.cleanup?.();
    return { exitCode: status.exitCode, output: text, notices };
  } finally {
    await plan.cleanup?.();
  }
}

describe('blocked: writes outside the writable roots', () => {
  it.each([
    ['/etc', '/etc/ux-escape-probe'],
    ['/usr', '/usr/ux-escape-probe'],
    ['$HOME', join(process.env.HOME ?? '/root', 'ux-escape-probe')],
  ])('cannot write into %s', async (_, target) => {
    const result = await sandboxed(`echo escaped > '${target}'`);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toMatch(/read-only file system/i);
    expect(existsSync(target)).toBe(false);
  });

  it('cannot write into a directory outside the roots', async () => {
    const result = await sandboxed(`echo escaped > '${outside}/escaped'`);
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(join(outside, 'escaped'))).toBe(false);
  });

  it('cannot write outside through a symlink made in the workspace', async () => {
    const result = await sandboxed(`ln -s '${outside}' out-link && echo escaped > out-link/via-symlink`);
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(join(outside, 'via-symlink'))).toBe(false);
    rmSync(join(ws, 'out-link'), { force: true });
  });

  it('cannot write outside through a hard link made in the workspace', async () => {
    writeFileSync(join(outside, 'victim'), 'original\n');
    const result = await sandboxed(`ln '${outside}/victim' hard-link && echo escaped >> hard-link`);
    expect(result.exitCode).not.toBe(0);
    expect(readFileSync(join(outside, 'victim'), 'utf8')).toBe('original\n');
    expect(existsSync(join(ws, 'hard-link'))).toBe(false);
  });

  it('cannot write outside through /proc/1/root', async () => {
    const result = await sandboxed(`echo escaped > /proc/1/root${outside}/via-proc`);
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(join(outside, 'via-proc'))).toBe(false);
  });

  it('cannot write outside from a nested user namespace', async () => {
    const result = await sandboxed(
      `${probe} unshare-user; unshare -r /bin/sh -c 'echo escaped > ${outside}/nested'`,
    );
    expect(result.output).toMatch(/BLOCKED: Operation not permitted/);
    expect(existsSync(join(outside, 'nested'))).toBe(false);
  });
});

describe('blocked: git configuration and hooks stay read-only', () => {
  it('cannot change .git/config', async () => {
    const result = await sandboxed('printf "[core]\\n\\tfsmonitor = /tmp/evil\\n" >> .git/config');
    expect(result.exitCode).not.toBe(0);
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe(gitConfigBefore);
  });

  it('cannot add a hook', async () => {
    const result = await sandboxed(
      'printf "#!/bin/sh\\necho pwned\\n" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit',
    );
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(join(ws, '.git', 'hooks', 'pre-commit'))).toBe(false);
  });

  it('cannot rename .git to put another in its place', async () => {
    const result = await sandboxed('mv .git .git-moved && mkdir -p .git/hooks');
    expect(result.exitCode).not.toBe(0);
    expect(statSync(join(ws, '.git')).isDirectory()).toBe(true);
    expect(existsSync(join(ws, '.git-moved'))).toBe(false);
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe(gitConfigBefore);
  });

  it('cannot keep agent metadata directories it creates: they are taken away at once and reported', async () => {
    const result = await sandboxed(
      'mkdir -p .ux/skills && echo x > .ux/skills/evil; sleep 0.2; ls -A; test ! -e .ux/skills/evil',
    );
    expect(result.exitCode).toBe(0);
    expect(result.output.split('\n')).not.toContain('.ux');
    expect(existsSync(join(ws, '.ux'))).toBe(false);
    expect(result.notices).toEqual([
      expect.objectContaining({ kind: 'protected_path_undone', path: join(ws, '.ux') }),
    ]);
    expect(result.notices[0]!.message).toMatch(/agent metadata/);
  });

  it('cannot point the repository elsewhere with a new .git/commondir', async () => {
    const result = await sandboxed('echo ../../outside > .git/commondir; sleep 0.2; cat .git/commondir');
    expect(result.output).toMatch(/No such file or directory/);
    expect(existsSync(join(ws, '.git', 'commondir'))).toBe(false);
    expect(result.notices.map((notice) => notice.path)).toEqual([join(ws, '.git', 'commondir')]);
  });
});

describe('blocked: network and sockets', () => {
  let server: Server;
  let connections = 0;
  let datagrams = 0;
  let udpPort = 0;
  let udp: ReturnType<typeof createSocket>;
  const socketPath = () => join(outside, 'host.sock');
  let unixServer: Server;
  let unixConnections = 0;

  beforeAll(async () => {
    server = createServer((socket) => {
      connections++;
      socket.end('host-data\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    udp = createSocket('udp4');
    udp.on('message', () => {
      datagrams++;
    });
    await new Promise<void>((resolve) => udp.bind(0, '127.0.0.1', resolve));
    udpPort = udp.address().port;
    unixServer = createServer((socket) => {
      unixConnections++;
      socket.end('host-unix\n');
    });
    await new Promise<void>((resolve) => unixServer.listen(socketPath(), resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await new Promise((resolve) => udp.close(() => resolve(undefined)));
    await new Promise((resolve) => unixServer.close(resolve));
  });

  it('cannot open TCP to a host listener', async () => {
    const port = (server.address() as { port: number }).port;
    const result = await sandboxed(
      `node -e "require('net').connect(${port},'127.0.0.1').on('data',d=>process.stdout.write(d)).on('error',e=>{console.error(e.code);process.exit(3)})"`,
    );
    expect(result.exitCode).not.toBe(0);
    expect(result.output).not.toContain('host-data');
    expect(connections).toBe(0);
  });

  it('cannot send UDP to a host listener', async () => {
    const result = await sandboxed(
      `node -e "const s=require('dgram').createSocket('udp4');s.on('error',e=>{console.error(e.code);process.exit(3)});s.send('x',${udpPort},'127.0.0.1',e=>process.exit(e?3:0))"`,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(result.exitCode).not.toBe(0);
    expect(datagrams).toBe(0);
  });

  it('cannot connect to a unix socket outside', async () => {
    const result = await sandboxed(
      `node -e "require('net').connect('${socketPath()}').on('data',d=>process.stdout.write(d)).on('error',e=>{console.error(e.code);process.exit(3)})"`,
    );
    expect(result.exitCode).not.toBe(0);
    expect(result.output).not.toContain('host-unix');
    expect(unixConnections).toBe(0);
  });

  it('allows TCP to the host when the network is on', async () => {
    const port = (server.address() as { port: number }).port;
    const result = await sandboxed(
      `node -e "require('net').connect(${port},'127.0.0.1').on('data',d=>{process.stdout.write(d);process.exit(0)})"`,
      { network: true },
    );
    expect(result.output).toContain('host-data');
    connections = 0;
  });
});

describe('blocked: other processes, the kernel, devices, privileges', () => {
  let victim: ChildProcess;
  beforeAll(() => {
    victim = spawn('sleep', ['300'], { env: { PATH, UX_HOST_SECRET: 'host-secret-value' }, stdio: 'ignore' });
  });
  afterAll(async () => {
    victim.kill('SIGKILL');
    await new Promise((resolve) => victim.once('exit', resolve));
  });

  it('cannot signal a process outside', async () => {
    const result = await sandboxed(`${probe} kill ${victim.pid}; kill -9 ${victim.pid}`);
    expect(result.output).toMatch(/BLOCKED/);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(isAlive(victim.pid!)).toBe(true);
  });

  it("cannot read another process's environment", async () => {
    const result = await sandboxed(`cat /proc/${victim.pid}/environ; ls /proc | grep -x ${victim.pid}`);
    expect(result.output).not.toContain('host-secret-value');
    expect(result.output.split('\n')).not.toContain(String(victim.pid));
  });

  it('cannot ptrace', async () => {
    const result = await sandboxed(`sleep 5 & ${probe} ptrace $!; kill %1`);
    expect(result.output).toMatch(/BLOCKED: Operation not permitted/);
  });

  it.each([
    ['mount', () => `${probe} mount /mnt`],
    ['remount a read-only bind writable', () => `${probe} remount-rw /etc`],
    ['io_uring', () => `${probe} io_uring`],
    ['mknod a device', () => `${probe} mknod ./null-device`],
  ])('cannot %s', async (_, script) => {
    const result = await sandboxed(script());
    expect(result.output).toMatch(/^BLOCKED: /m);
    expect(existsSync(join(ws, 'null-device'))).toBe(false);
  });

  it('cannot change kernel tunables, even as uid 0 (rewriting their current values)', async () => {
    const before = ['vm/swappiness', 'kernel/core_pattern', 'kernel/hostname'].map((name) =>
      readFileSync(`/proc/sys/${name}`, 'utf8'),
    );
    const result = await sandboxed(
      'for t in vm/swappiness kernel/core_pattern kernel/hostname; do v=$(cat /proc/sys/$t); echo "$v" > /proc/sys/$t && echo "WROTE $t"; done; echo 1 > /sys/kernel/profiling && echo WROTE-sysfs',
    );
    expect(result.output).not.toContain('WROTE');
    expect(result.output).toMatch(/read-only file system/i);
    expect(
      ['vm/swappiness', 'kernel/core_pattern', 'kernel/hostname'].map((name) =>
        readFileSync(`/proc/sys/${name}`, 'utf8'),
      ),
    ).toEqual(before);
  });

  it('cannot leave a set-user-id file or file capabilities in the workspace', async () => {
    const result = await sandboxed(
      `cp /bin/true ./suid-true && ${probe} setuid-bit ./suid-true; ${probe} setcap ./suid-true`,
    );
    expect(result.output.match(/BLOCKED/g)).toHaveLength(2);
    const mode = statSync(join(ws, 'suid-true')).mode;
    expect(mode & 0o6000).toBe(0);
    rmSync(join(ws, 'suid-true'), { force: true });
  });

  it('cannot inject input into its terminal (TIOCSTI)', async () => {
    const result = await sandboxed(`${probe} tiocsti`, { tty: true });
    expect(result.output).toMatch(/BLOCKED: Operation not permitted/);
  });

  it('kills background processes with the sandbox', async () => {
    const marker = `ux-bg-${process.pid}-${Date.now()}`;
    const result = await sandboxed(`(exec -a ${marker} sleep 300) & echo started`);
    expect(result.output).toContain('started');
    const survivors = () =>
      readdirSync('/proc')
        .filter((name) => /^\d+$/.test(name))
        .filter((pid) => {
          try {
            return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker) && isAlive(Number(pid));
          } catch {
            return false;
          }
        });
    for (const pid of survivors())
      expect(await waitUntilDead(Number(pid), 3_000), `background ${pid} outlived the sandbox`).toBe(true);
  });

  it('cannot use a descriptor the launcher inherited that points outside', async () => {
    const target = join(outside, 'fd-target');
    writeFileSync(target, 'original\n');
    const plan = await backend.plan({
      argv: ['/bin/sh', '-c', `${probe} write-fd 4; ${probe} write-fd 12`],
      cwd: ws,
      env: { PATH },
      policy: policy(),
      tty: false,
    });
    const fd = openSync(target, 'a');
    try {
      // A launcher that is not ux's spawner hands descriptors 4 and 12, open on a file outside, to the plan.
      const stdio: ('ignore' | 'pipe' | number)[] = ['ignore', 'pipe', 'pipe'];
      for (let i = 3; i <= 12; i++) stdio[i] = 'ignore';
      stdio[4] = fd;
      stdio[12] = fd;
      const child = spawn(plan.argv[0]!, plan.argv.slice(1), { cwd: ws, env: plan.env, stdio });
      let output = '';
      child.stdout!.on('data', (chunk: Buffer) => {
        output += chunk;
      });
      await new Promise((resolve) => child.on('close', resolve));
      expect(output.match(/BLOCKED: Bad file descriptor/g)).toHaveLength(2);
      expect(readFileSync(target, 'utf8')).toBe('original\n');
    } finally {
      closeSync(fd);
      await plan.cleanup?.();
    }
  });
});

describe('blocked: deny-read', () => {
  it('cannot read a deny-read path', async () => {
    const secretDir = join(root, 'secrets');
    mkdirSync(secretDir, { recursive: true });
    writeFileSync(join(secretDir, 'token'), 'top-secret-token');
    const denyPolicy = policy();
    if (denyPolicy.fileSystem.kind === 'restricted')
      denyPolicy.fileSystem.entries.push({ path: { type: 'path', path: secretDir }, access: 'none' });
    const plan = await backend.plan({
      argv: ['/bin/sh', '-c', `cat '${secretDir}/token'; ls '${secretDir}'`],
      cwd: ws,
      env: { PATH },
      policy: denyPolicy,
      tty: false,
    });
    try {
      const child = await spawner.spawn({
        argv: plan.argv,
        cwd: plan.cwd,
        env: plan.env,
        tty: false,
        stdin: 'closed',
      });
      const { text } = await runToEnd(child);
      expect(text).not.toContain('top-secret-token');
      expect(text).toMatch(/permission denied/i);
    } finally {
      await plan.cleanup?.();
    }
  });
});

describe('still working', () => {
  it('writes in the workspace', async () => {
    const result = await sandboxed('echo fine > inside.txt && cat inside.txt');
    expect(result).toMatchObject({ exitCode: 0, output: 'fine\n' });
    expect(readFileSync(join(ws, 'inside.txt'), 'utf8')).toBe('fine\n');
  });

  it('git add and git commit in the workspace repository', async () => {
    const result = await sandboxed(
      'echo change >> README && git add README && git -c user.name=ux -c user.email=ux@example.invalid commit -q -m "from the sandbox" && git log --oneline | head -1',
    );
    expect(result.exitCode).toBe(0);
    expect(result.output).toContain('from the sandbox');
    expect(execFileSync('git', ['-C', ws, 'log', '--oneline', '-1']).toString()).toContain(
      'from the sandbox',
    );
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe(gitConfigBefore);
  });

  it('starts a login shell quietly when home is in the workspace; a start-up file it creates is taken away', async () => {
    const home = join(ws, 'home');
    mkdirSync(home);
    const homeBackend = createBwrapSandbox({ homeDir: home });
    onTestFinished(() => homeBackend.close());
    const plan = await homeBackend.plan({
      argv: ['/bin/bash', '-lc', 'echo ready; echo "echo pwned" > .bashrc; sleep 0.2; cat .bashrc'],
      cwd: home,
      env: { PATH, HOME: home },
      policy: policy(),
      tty: false,
    });
    const notices: SandboxNotice[] = [];
    plan.onNotice?.((notice) => notices.push(notice));
    try {
      const child = await spawner.spawn({
        argv: plan.argv,
        cwd: plan.cwd,
        env: plan.env,
        tty: false,
        stdin: 'closed',
      });
      const { text } = await runToEnd(child, 20_000);
      // Nothing before "ready" (no placeholder for a login shell to trip over), and the file is gone.
      expect(text).toMatch(/^ready\n.*\.bashrc: No such file or directory\n$/);
    } finally {
      await plan.cleanup?.();
    }
    expect(existsSync(join(home, '.bashrc'))).toBe(false);
    expect(existsSync(join(home, '.bash_profile'))).toBe(false);
    expect(notices.map((notice) => notice.path)).toEqual([join(home, '.bashrc')]);
  });

  it('runs node and python3, reads /etc/passwd', async () => {
    const result = await sandboxed(
      'node -e "console.log(6*7)" && python3 -c "print(6*9)" && head -1 /etc/passwd',
    );
    expect(result.exitCode).toBe(0);
    expect(result.output).toMatch(/^42\n54\nroot:/);
  });

  it('uses /tmp only when the policy says so', async () => {
    const name = `/tmp/ux-tmp-probe-${process.pid}-${Date.now()}`;
    const blocked = await sandboxed(`echo x > ${name}`);
    expect(blocked.exitCode).not.toBe(0);
    expect(existsSync(name)).toBe(false);
    const allowed = await sandboxed(`echo x > ${name}`, { slashTmp: true });
    expect(allowed.exitCode).toBe(0);
    expect(existsSync(name)).toBe(true);
    rmSync(name);
  });

  it('leaves no placeholder files behind, during the command or after it', async () => {
    const before = readdirSync(ws).sort();
    const gitBefore = readdirSync(join(ws, '.git')).sort();
    const during = await sandboxed(`ls -A; ls -A .git; echo ---; ls -A '${ws}' > /dev/null`);
    expect(during.output).not.toMatch(/^\.(ux|codex|agents)$/m);
    expect(readdirSync(ws).sort()).toEqual(before);
    expect(readdirSync(join(ws, '.git')).sort()).toEqual(gitBefore);
    expect(existsSync(join(ws, '.ux'))).toBe(false);
    expect(existsSync(join(ws, '.codex'))).toBe(false);
    expect(existsSync(join(ws, '.agents'))).toBe(false);
    expect(existsSync(join(ws, '.git', 'config.worktree'))).toBe(false);
    expect(existsSync(join(ws, '.git', 'commondir'))).toBe(false);
    expect(existsSync(join(ws, '.git', 'info', 'attributes'))).toBe(false);
  });
});
