// The escape battery for what this backend declares: workspace-write (no .git in the workspace: with
// one the plan is refused, see the last block), network off, as whoever runs the tests (root on CI).
// Every probe that must be blocked also checks the host side (the file really is absent or unchanged,
// the listener really saw nothing, the victim is alive).
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createSocket } from 'node:dgram';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
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
import {
  type EffectivePolicy,
  effectivePolicyFromSandboxPolicy,
  type SandboxNotice,
  SandboxUnavailableError,
} from '@ux/protocol';
import { isAlive, runToEnd } from '@ux/protocol-testing';
import { createLandlockSandbox } from '@ux/sandbox-landlock';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const backend = createLandlockSandbox();
const spawner = createLocalSpawner();
const PATH = '/usr/local/bin:/usr/bin:/bin';
let root: string;
let ws: string;
let outside: string;
let probe: string;

const policy = (overrides: { network?: boolean; deny?: string[] } = {}): EffectivePolicy => {
  const result = effectivePolicyFromSandboxPolicy({
    type: 'workspace-write',
    writable_roots: [],
    network_access: overrides.network ?? false,
    exclude_tmpdir_env_var: true,
    exclude_slash_tmp: true,
  });
  if (result.fileSystem.kind === 'restricted')
    for (const path of overrides.deny ?? [])
      result.fileSystem.entries.push({ path: { type: 'path', path }, access: 'none' });
  return result;
};

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'ux-landlock-escape-')));
  ws = join(root, 'workspace');
  outside = join(root, 'outside');
  mkdirSync(ws);
  mkdirSync(outside);
  writeFileSync(join(ws, 'README'), 'hello\n');
  writeFileSync(join(outside, 'keep'), 'original\n');
  probe = join(outside, 'escape-probe');
  // The same probe program as bwrap's battery (one attempt per run, ALLOWED or BLOCKED: <error>).
  const source = fileURLToPath(new URL('../fixtures/escape-probe.c', import.meta.url));
  execFileSync('cc', ['-O1', '-o', probe, source]);
  await warmUpSpawner(spawner);
}, 60_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));
useLeakCheck();
// Registered after the leak check, so it runs first: the backend's path guard is not a leak.
afterAll(() => backend.close());

async function sandboxed(
  script: string,
  options: { network?: boolean; tty?: boolean; deny?: string[]; cwd?: string } = {},
) {
  const plan = await backend.plan({
    argv: ['/bin/bash', '-c', script],
    cwd: options.cwd ?? ws,
    env: { PATH, HOME: process.env.HOME ?? '/root' },
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
    ['/etc', '/etc/ux-landlock-escape'],
    ['/usr', '/usr/ux-landlock-escape'],
    ['$HOME', join(process.env.HOME ?? '/root', 'ux-landlock-escape')],
    ['/dev/shm', '/dev/shm/ux-landlock-escape'],
    ['/var/tmp', '/var/tmp/ux-landlock-escape'],
  ])('cannot create a file in %s', async (_, target) => {
    const result = await sandboxed(`echo escaped > '${target}'`);
    expect(result.exitCode).not.toBe(0);
    expect(result.output).toMatch(/permission denied/i);
    expect(existsSync(target)).toBe(false);
  });

  it('cannot write, truncate, remove or rename a file outside', async () => {
    const keep = join(outside, 'keep');
    const result = await sandboxed(
      `echo x >> '${keep}'; truncate -s 0 '${keep}'; rm -f '${keep}'; mv '${keep}' '${ws}/stolen'; mkdir '${outside}/d'; ln -s /etc '${outside}/l'`,
    );
    expect(result.output.match(/denied|not permitted|cross-device/gi)?.length).toBeGreaterThanOrEqual(6);
    expect(readFileSync(keep, 'utf8')).toBe('original\n');
    expect(existsSync(join(ws, 'stolen'))).toBe(false);
    expect(existsSync(join(outside, 'd'))).toBe(false);
  });

  it('cannot write outside through a symlink made in the workspace', async () => {
    const result = await sandboxed(`ln -s '${outside}' out && echo escaped > out/via-link`);
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(join(outside, 'via-link'))).toBe(false);
    rmSync(join(ws, 'out'), { force: true });
  });

  it('cannot write outside through a hard link made in the workspace', async () => {
    const result = await sandboxed(`ln '${outside}/keep' hard && echo escaped >> hard`);
    expect(result.exitCode).not.toBe(0);
    expect(readFileSync(join(outside, 'keep'), 'utf8')).toBe('original\n');
    expect(existsSync(join(ws, 'hard'))).toBe(false);
  });

  it('cannot write outside through /proc/self/root or /proc/1/root', async () => {
    const result = await sandboxed(
      `echo escaped > /proc/self/root${outside}/via-self; echo escaped > /proc/1/root${outside}/via-init`,
    );
    expect(result.exitCode).not.toBe(0);
    expect(existsSync(join(outside, 'via-self'))).toBe(false);
    expect(existsSync(join(outside, 'via-init'))).toBe(false);
  });

  it('cannot loosen its own sandbox from a nested user namespace or a mount', async () => {
    const result = await sandboxed(
      `${probe} unshare-user; ${probe} mount /mnt; ${probe} remount-rw /etc; unshare -r /bin/sh -c 'echo escaped > ${outside}/nested'`,
    );
    expect(result.output.match(/BLOCKED: Operation not permitted/g)).toHaveLength(3);
    expect(existsSync(join(outside, 'nested'))).toBe(false);
  });

  it('cannot change kernel tunables or sysfs, even as uid 0', async () => {
    const names = ['vm/swappiness', 'kernel/hostname'];
    const before = names.map((name) => readFileSync(`/proc/sys/${name}`, 'utf8'));
    const result = await sandboxed(
      `for t in ${names.join(' ')}; do v=$(cat /proc/sys/$t); echo "$v" > /proc/sys/$t && echo "WROTE $t"; done; echo 1 > /sys/kernel/profiling && echo WROTE-sysfs; echo b > /proc/sysrq-trigger && echo WROTE-sysrq`,
    );
    expect(result.output).not.toContain('WROTE');
    expect(names.map((name) => readFileSync(`/proc/sys/${name}`, 'utf8'))).toEqual(before);
  });
});

describe('blocked: reads of what is hidden', () => {
  it('cannot read a deny-read directory or file, nor list it', async () => {
    const secrets = join(root, 'secrets');
    mkdirSync(secrets, { recursive: true });
    writeFileSync(join(secrets, 'token'), 'top-secret-token');
    writeFileSync(join(outside, 'secret-file'), 'top-secret-file');
    const result = await sandboxed(
      `cat '${secrets}/token'; ls '${secrets}'; cat '${outside}/secret-file'; cat '${outside}/keep'`,
      { deny: [secrets, join(outside, 'secret-file')] },
    );
    expect(result.output).not.toContain('top-secret');
    expect(result.output).not.toMatch(/^token$/m);
    // The sibling of a hidden file stays readable.
    expect(result.output).toContain('original');
  });

  it('cannot read raw disks or kernel memory and logs through /dev, even as uid 0', async () => {
    const result = await sandboxed(
      'for d in /dev/vda /dev/sda /dev/nvme0n1 /dev/kmsg /dev/mem /dev/port /dev/console; do [ -e $d ] && { head -c 16 $d >/dev/null 2>&1 && echo "READ $d" || echo "DENIED $d"; }; done; echo ok > /dev/null && echo NULL-OK',
    );
    expect(result.output).not.toContain('READ ');
    expect(result.output).toContain('NULL-OK');
  });

  it('keeps no capability, even when started by root', async () => {
    const result = await sandboxed(
      "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status; chown 65534 README && echo CHOWNED",
    );
    for (const line of result.output.split('\n').filter((l) => l.startsWith('Cap')))
      expect(line).toMatch(/:\s+0+$/);
    expect(result.output).not.toContain('CHOWNED');
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
  let abstractServer: Server;
  let unixConnections = 0;
  const abstractName = `\0ux-landlock-escape-${process.pid}`;

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
    const onUnix = (socket: import('node:net').Socket) => {
      unixConnections++;
      socket.end('host-unix\n');
    };
    unixServer = createServer(onUnix);
    await new Promise<void>((resolve) => unixServer.listen(socketPath(), resolve));
    abstractServer = createServer(onUnix);
    await new Promise<void>((resolve) => abstractServer.listen(abstractName, resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await new Promise((resolve) => udp.close(() => resolve(undefined)));
    await new Promise((resolve) => unixServer.close(resolve));
    await new Promise((resolve) => abstractServer.close(resolve));
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

  it('cannot listen on a TCP port', async () => {
    const result = await sandboxed(
      `node -e "require('net').createServer().listen(0,'127.0.0.1',()=>{console.log('LISTENING');process.exit(0)}).on('error',e=>{console.error(e.code);process.exit(3)})"`,
    );
    expect(result.output).not.toContain('LISTENING');
  });

  it('cannot send UDP to a host listener', async () => {
    const result = await sandboxed(
      `node -e "const s=require('dgram').createSocket('udp4');s.on('error',e=>{console.error(e.code);process.exit(3)});s.send('x',${udpPort},'127.0.0.1',e=>process.exit(e?3:0))"`,
    );
    expect(result.exitCode).not.toBe(0);
    // The datagram, had it left, was sent before the command exited; one more round trip on the host
    // side makes sure it would have been read.
    await new Promise<void>((resolve) => udp.send('flush', udpPort, '127.0.0.1', () => resolve()));
    await new Promise((resolve) => setImmediate(resolve));
    expect(datagrams).toBeLessThanOrEqual(1);
  });

  it('cannot connect to a unix socket outside, by path or abstract name', async () => {
    const result = await sandboxed(
      `for a in '${socketPath()}' '${abstractName.replace('\0', '\\0')}'; do node -e "require('net').connect(process.argv[1].replace('\\\\\\\\0','\\\\0')).on('data',d=>process.stdout.write(d)).on('error',e=>{console.error(e.code);process.exit(3)})" "$a"; done`,
    );
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
  });
});

describe('blocked: other processes, devices, privileges', () => {
  let victim: ChildProcess;
  beforeAll(() => {
    victim = spawn('sleep', ['300'], { env: { PATH, UX_HOST_SECRET: 'host-secret-value' }, stdio: 'ignore' });
  });
  afterAll(async () => {
    victim.kill('SIGKILL');
    await new Promise((resolve) => victim.once('exit', resolve));
  });

  it('cannot signal a process outside', async () => {
    const result = await sandboxed(
      `${probe} kill ${victim.pid}; kill -9 ${victim.pid}; kill -9 ${process.pid}`,
    );
    expect(result.output).toMatch(/BLOCKED: Operation not permitted/);
    expect(isAlive(victim.pid!)).toBe(true);
  });

  it("cannot read another process's environment, memory, descriptors or directories", async () => {
    // Its fd numbers can be listed (/proc shows the host's processes: no pid namespace), not followed.
    const v = victim.pid;
    const result = await sandboxed(
      `cat /proc/${v}/environ; cat /proc/${process.pid}/environ; head -c 1 /proc/${v}/mem; readlink /proc/${v}/cwd || echo NO-CWD; readlink /proc/${v}/fd/0 || echo NO-FD; ls /proc/${v}/root/ || echo NO-ROOT`,
    );
    expect(result.output).not.toContain('host-secret-value');
    expect(result.output).not.toContain('UX_');
    expect(result.output.match(/Permission denied/g)?.length).toBeGreaterThanOrEqual(4);
    for (const marker of ['NO-CWD', 'NO-FD', 'NO-ROOT']) expect(result.output).toContain(marker);
  });

  it('cannot ptrace', async () => {
    const result = await sandboxed(`${probe} ptrace ${victim.pid}; sleep 5 & ${probe} ptrace $!; kill %1`);
    expect(result.output.match(/BLOCKED: Operation not permitted/g)).toHaveLength(2);
  });

  it.each([
    ['io_uring', () => `${probe} io_uring`],
    ['mknod a device', () => `${probe} mknod ./null-device`],
  ])('cannot %s', async (_, script) => {
    const result = await sandboxed(script());
    expect(result.output).toMatch(/^BLOCKED: /m);
    expect(existsSync(join(ws, 'null-device'))).toBe(false);
  });

  it('cannot leave a set-user-id file or file capabilities in the workspace', async () => {
    const result = await sandboxed(
      `cp /bin/true ./suid-true && ${probe} setuid-bit ./suid-true; ${probe} setcap ./suid-true`,
    );
    expect(result.output.match(/BLOCKED/g)).toHaveLength(2);
    expect(statSync(join(ws, 'suid-true')).mode & 0o6000).toBe(0);
    rmSync(join(ws, 'suid-true'), { force: true });
  });

  it('cannot inject input into its terminal (TIOCSTI)', async () => {
    const result = await sandboxed(`${probe} tiocsti`, { tty: true });
    expect(result.output).toMatch(/BLOCKED: Operation not permitted/);
  });

  it('uses its own terminal on a PTY (stty, /dev/tty, /dev/stdout, /dev/stderr)', async () => {
    const result = await sandboxed(
      'stty size </dev/tty && echo TTY-OK; echo OUT-OK > /dev/stdout; echo ERR-OK > /dev/stderr; echo FD-OK > /proc/self/fd/1',
      { tty: true },
    );
    for (const marker of ['TTY-OK', 'OUT-OK', 'ERR-OK', 'FD-OK']) expect(result.output).toContain(marker);
  });

  it("cannot read or write this user's other terminals", async () => {
    // A terminal of the host (another session's, say): its pty is in the shared /dev/pts.
    const victimTerminal = await spawner.spawn({
      argv: ['/bin/sh', '-c', 'tty; sleep 30'],
      cwd: ws,
      env: { PATH },
      tty: true,
      stdin: 'pipe',
    });
    try {
      let seen = '';
      victimTerminal.onOutput((chunk) => {
        seen += Buffer.from(chunk).toString();
      });
      const deadline = Date.now() + 5_000;
      while (!/\/dev\/pts\/\d+/.test(seen) && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 20));
      const pts = /\/dev\/pts\/\d+/.exec(seen)?.[0];
      expect(pts).toBeDefined();
      const result = await sandboxed(
        `echo INJECTED > ${pts} && echo WROTE; timeout 1 head -c 1 ${pts} && echo READ; ls /dev/pts && echo LISTED`,
      );
      expect(result.output).not.toContain('WROTE');
      expect(result.output).not.toContain('READ');
      expect(result.output).not.toContain('LISTED');
      expect(seen).not.toContain('INJECTED');
    } finally {
      await victimTerminal.terminate();
    }
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

describe('protected names', () => {
  it('takes away agent metadata directories it creates, and reports them', async () => {
    const result = await sandboxed('mkdir .ux .codex && echo made; sleep 0.2; ls -A');
    expect(result.output).toContain('made');
    expect(existsSync(join(ws, '.ux'))).toBe(false);
    expect(existsSync(join(ws, '.codex'))).toBe(false);
    expect(result.notices.map((notice) => notice.path).sort()).toEqual([join(ws, '.codex'), join(ws, '.ux')]);
  });

  it.each([
    ['renamed into place', 'mkdir staged && echo x > staged/config && mv staged .ux && echo made'],
    ['as a link to the home directory', 'ln -s "$HOME" .codex && echo made'],
    ['as a .git file pointing elsewhere', 'echo "gitdir: $PWD/../outside" > .git && echo made'],
  ])('takes away a protected name made %s', async (_, script) => {
    const result = await sandboxed(`${script}; sleep 0.2; ls -A`);
    expect(result.output).toContain('made');
    for (const name of ['.ux', '.codex', '.git']) expect(existsSync(join(ws, name))).toBe(false);
    expect(result.notices.length).toBeGreaterThanOrEqual(1);
    rmSync(join(ws, 'staged'), { recursive: true, force: true });
  });

  it('home as the workspace: a PATH directory rebuilt after moving its parent away is taken away', async () => {
    // Nothing pins `.local` (bwrap makes it a mount point): the guard watches from the workspace root.
    const home = join(root, 'home');
    mkdirSync(join(home, '.local', 'share'), { recursive: true });
    const homeBackend = createLandlockSandbox({ homeDir: home });
    try {
      const plan = await homeBackend.plan({
        argv: [
          '/bin/sh',
          '-c',
          'mv .local .local-old && mkdir -p .local/bin && echo evil > .local/bin/ls; mkdir -p .config/fish && echo done',
        ],
        cwd: home,
        env: { PATH, HOME: home },
        policy: policy(),
        tty: false,
      });
      const notices: SandboxNotice[] = [];
      plan.onNotice?.((notice) => notices.push(notice));
      const child = await spawner.spawn({
        argv: plan.argv,
        cwd: home,
        env: plan.env,
        tty: false,
        stdin: 'closed',
      });
      const { text } = await runToEnd(child, 20_000);
      await plan.cleanup?.();
      expect(text).toContain('done');
      expect(existsSync(join(home, '.local-old'))).toBe(true);
      expect(existsSync(join(home, '.local', 'bin'))).toBe(false);
      expect(existsSync(join(home, '.config', 'fish'))).toBe(false);
      expect(notices.map((notice) => notice.path)).toEqual(
        expect.arrayContaining([join(home, '.config', 'fish')]),
      );
    } finally {
      await homeBackend.close();
    }
  });

  it('refuses a workspace whose .git exists, naming the path and the fix, and runs nothing', async () => {
    const repo = join(root, 'repo');
    mkdirSync(join(repo, '.git', 'hooks'), { recursive: true });
    writeFileSync(join(repo, '.git', 'config'), '[core]\n');
    const error = await sandboxed('touch ran', { cwd: repo }).catch((caught: unknown) => caught);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    const unavailable = error as SandboxUnavailableError;
    expect(unavailable.reason).toContain(join(repo, '.git'));
    expect(unavailable.fix).toMatch(/bwrap/);
    expect(existsSync(join(repo, 'ran'))).toBe(false);
  });

  it('a repository it creates is checked when the command ends: a planted hook is taken away', async () => {
    const sub = join(ws, 'sub');
    mkdirSync(sub);
    const result = await sandboxed(
      "cd sub && git init -q && printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo planted",
    );
    expect(result.output).toContain('planted');
    expect(existsSync(join(sub, '.git', 'hooks', 'pre-commit'))).toBe(false);
    rmSync(sub, { recursive: true, force: true });
  });
});
