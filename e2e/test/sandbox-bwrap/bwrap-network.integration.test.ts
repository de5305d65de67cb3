// The network modes through real bwrap: `proxied` (the host's @ux/network-proxy on a Unix socket,
// reached from inside through ux-sandbox-exec's bridge on 127.0.0.1:3128), `enabled` (no unix sockets
// outside), and the unix socket allow-list (seccomp user notification), each checked from the host side
// too: what the destination server saw, what the proxy decided, and that no helper outlives its command.
import { createHash } from 'node:crypto';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createNetworkProxy, type NetworkConnectionEvent, type NetworkProxy } from '@ux/network-proxy';
import type { EffectivePolicy, ExecProcess, NetworkPolicy } from '@ux/protocol';
import { isAlive, runToEnd, waitForOutput } from '@ux/protocol-testing';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';

const backend = createBwrapSandbox();
const spawner = createLocalSpawner();
const PATH = '/usr/local/bin:/usr/bin:/bin';
const PYTHON = '/usr/bin/python3';
const BIG = 16 * 1024 * 1024;
const bigBody = Buffer.alloc(BIG);
for (let i = 0; i < BIG; i += 4) bigBody.writeUInt32LE((i * 2654435761) >>> 0, i);
const bigDigest = createHash('sha256').update(bigBody).digest('hex');
const GIT_SHA = '0123456789abcdef0123456789abcdef01234567';

let root: string;
let ws: string;
let home: string;
let outside: string;
let proxySocket: string;
let proxy: NetworkProxy;
const events: NetworkConnectionEvent[] = [];
let origin: HttpServer;
let originPort: number;
const seen: { method: string; url: string; host: string }[] = [];
let counter: Server;
let counterPort: number;
const unixServers: Server[] = [];
const openSockets = new Set<Socket>();

/** A pkt-line of git's smart HTTP protocol. */
const pkt = (line: string) => `${(Buffer.byteLength(line) + 4).toString(16).padStart(4, '0')}${line}`;

beforeAll(async () => {
  root = realpathSync(mkdtempSync(join(tmpdir(), 'ux-bwrap-net-')));
  ws = join(root, 'workspace');
  home = join(root, 'home');
  outside = join(root, 'outside');
  for (const dir of [ws, home, outside, join(root, 'run')]) mkdirSync(dir);
  chmodSync(join(root, 'run'), 0o700);

  // The destination: records every request; a git repository's ref advertisement; 16 MiB; an upload digest.
  origin = createHttpServer((request, response) => {
    seen.push({ method: request.method ?? '', url: request.url ?? '', host: request.headers.host ?? '' });
    const url = request.url ?? '';
    if (url.startsWith('/x.git/info/refs')) {
      response.writeHead(200, { 'Content-Type': 'application/x-git-upload-pack-advertisement' });
      response.end(
        `${pkt('# service=git-upload-pack\n')}0000${pkt(`${GIT_SHA} HEAD\0symref=HEAD:refs/heads/main\n`)}${pkt(`${GIT_SHA} refs/heads/main\n`)}0000`,
      );
    } else if (url === '/big') {
      response.writeHead(200, { 'Content-Length': String(BIG) });
      response.end(bigBody);
    } else if (url === '/upload') {
      const hash = createHash('sha256');
      let length = 0;
      request.on('data', (chunk: Buffer) => {
        hash.update(chunk);
        length += chunk.length;
      });
      request.on('end', () => response.end(`uploaded ${length} ${hash.digest('hex')}\n`));
    } else {
      response.end(`origin says hi to ${url}\n`);
    }
  });
  origin.on('connection', (socket) => {
    openSockets.add(socket);
    socket.on('close', () => openSockets.delete(socket));
  });
  await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
  originPort = (origin.address() as { port: number }).port;

  // Reads until the client half-closes, then answers with the count: a tunnel must pass the FIN on.
  counter = createServer({ allowHalfOpen: true }, (socket) => {
    openSockets.add(socket);
    socket.on('close', () => openSockets.delete(socket));
    socket.on('error', () => {});
    let received = 0;
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    socket.on('end', () => socket.end(`received ${received}\n`));
  });
  await new Promise<void>((resolve) => counter.listen(0, '127.0.0.1', resolve));
  counterPort = (counter.address() as { port: number }).port;

  const names: Record<string, string[]> = { 'allowed.test': ['127.0.0.1'], 'denied.test': ['127.0.0.1'] };
  proxy = createNetworkProxy({
    policy: { allow: ['allowed.test'], deny: ['denied.test'] },
    resolve: async (host) => {
      const found = names[host];
      if (found) return found;
      throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    },
  });
  proxy.onConnection((event) => events.push(event));
  proxySocket = join(root, 'run', 'proxy.sock');
  await proxy.listenUnix(proxySocket);

  // Two unix sockets outside the workspace, as the Docker socket or an ssh-agent would be.
  for (const name of ['a', 'b']) {
    const server = createServer((socket) => {
      socket.on('error', () => {});
      socket.end(`hello from ${name}\n`);
    });
    await new Promise<void>((resolve) => server.listen(join(outside, `${name}.sock`), resolve));
    unixServers.push(server);
  }
  await warmUpSpawner(spawner);
}, 60_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));
useLeakCheck();
// Registered after the leak check, so they run first: servers and the backend's guard are not leaks.
afterAll(async () => {
  await backend.close();
  await proxy.close();
  for (const socket of openSockets) socket.destroy();
  await Promise.all(
    [origin, counter, ...unixServers].map(
      (server) => new Promise<void>((resolve) => (server as Server).close(() => resolve())),
    ),
  );
});

interface RunOptions {
  network: NetworkPolicy;
  allowUnixSockets?: string[];
  reads?: 'all' | 'minimal';
  /** Called once the command runs (to interrupt it, say); the run still waits for its end. */
  during?: (child: ExecProcess) => Promise<void>;
}

function policy(options: RunOptions): EffectivePolicy {
  return {
    fileSystem: {
      kind: 'restricted',
      entries: [
        {
          path: { type: 'special', value: options.reads === 'minimal' ? 'minimal' : 'root' },
          access: 'read',
        },
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
      ],
    },
    network: options.network,
    ...(options.network === 'proxied' ? { networkProxy: { unixSocket: proxySocket } } : {}),
    ...(options.allowUnixSockets ? { allowUnixSockets: options.allowUnixSockets } : {}),
  };
}

/** Our helpers still alive: `ux-sandbox-net` processes whose arguments name this suite's directory. */
function liveHelpers(): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'ux-sandbox-net') continue;
      if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(root) && isAlive(pid)) found.push(pid);
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

async function expectNoHelperLeft(): Promise<void> {
  // Generous: a loaded machine takes its time to reap; a helper that leaks stays for good.
  const deadline = Date.now() + 15_000;
  while (liveHelpers().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  expect(liveHelpers(), 'a network helper outlived its command').toEqual([]);
}

/** Polls `probe` until it returns something (15 s at most: generous, since machines are noisy). */
async function eventually<T>(probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function sandboxed(script: string, options: RunOptions) {
  const plan = await backend.plan({
    argv: ['/bin/bash', '-c', script],
    cwd: ws,
    env: { PATH, HOME: home, GIT_TERMINAL_PROMPT: '0' },
    policy: policy(options),
    tty: false,
  });
  onTestFinished(() => plan.cleanup?.());
  const child = await spawner.spawn({
    argv: plan.argv,
    cwd: plan.cwd,
    env: plan.env,
    tty: false,
    stdin: 'closed',
  });
  onTestFinished(() => child.terminate());
  const ran = runToEnd(child, 25_000);
  await options.during?.(child);
  const { status, text } = await ran;
  await plan.cleanup?.();
  await expectNoHelperLeft();
  return { exitCode: status.exitCode, output: text, plan };
}

/** A Python script in the workspace (so it exists under restricted reads too), run with arguments. */
function python(name: string, source: string, ...args: string[]): string {
  writeFileSync(join(ws, name), source);
  return [PYTHON, name, ...args].map((part) => `'${part}'`).join(' ');
}

const UNIX_PROBE = `
import errno, os, socket, sys
def attempt(path, kind=socket.SOCK_STREAM):
    try:
        s = socket.socket(socket.AF_UNIX, kind)
    except OSError as e:
        return 'socket:' + errno.errorcode[e.errno]
    try:
        s.connect(path)
        return 'ok:' + s.recv(100).decode().strip()
    except OSError as e:
        return 'connect:' + errno.errorcode[e.errno]
for arg in sys.argv[1:]:
    # "@name" is the abstract address "\\0name" (an argument cannot hold a NUL byte).
    path = '\\0' + arg[1:] if arg.startswith('@') else arg
    print(arg if arg.startswith('@') else arg.split('/')[-1], attempt(path))
`;

const url = (host: string, path: string) => `http://${host}:${originPort}${path}`;

describe('network "proxied": the host proxy is the only way out', () => {
  it('curl reaches an allowed host with a plain request and through CONNECT, both seen by the proxy', async () => {
    const before = seen.length;
    const startedAt = Date.now();
    const { exitCode, output, plan } = await sandboxed(
      `echo "net=$UX_SANDBOX_NETWORK proxy=$HTTP_PROXY"; curl -sS ${url('allowed.test', '/plain')} && curl -sS -p ${url('allowed.test', '/tunnel')} && curl -sS --socks5-hostname 127.0.0.1:3128 ${url('allowed.test', '/socks')}`,
      { network: 'proxied' },
    );
    expect(output).toBe(
      'net=proxied proxy=http://127.0.0.1:3128\norigin says hi to /plain\norigin says hi to /tunnel\norigin says hi to /socks\n',
    );
    expect(exitCode).toBe(0);
    expect(plan.enforcement.network).toBe('enforced');
    expect(seen.slice(before).map((r) => `${r.method} ${r.url} ${r.host}`)).toEqual([
      `GET /plain allowed.test:${originPort}`,
      `GET /tunnel allowed.test:${originPort}`,
      `GET /socks allowed.test:${originPort}`,
    ]);
    // Events come when an exchange ends, which the proxy may see a moment after curl has exited.
    const recent = await eventually(() => {
      const mine = events.filter((e) => e.host === 'allowed.test' && e.startedAt >= startedAt);
      return mine.length >= 3 ? mine : undefined;
    });
    expect(recent.map((e) => `${e.protocol} ${e.decision}`).sort()).toEqual(
      ['http', 'https', 'socks5'].map((p) => `${p} allowed`),
    );
  });

  it('a denied host gets the proxy’s 403, and nothing reaches the destination', async () => {
    const before = seen.length;
    const { output } = await sandboxed(
      `curl -sS -i ${url('denied.test', '/nope')}; echo; curl -sS -p ${url('denied.test', '/nope')}; echo "rc=$?"`,
      { network: 'proxied' },
    );
    expect(output).toContain('403 Blocked by ux network policy');
    expect(output).toContain('ux: network access to "denied.test"');
    expect(output).toMatch(/CONNECT tunnel failed, response 403/);
    expect(output).toContain('rc=56');
    expect(seen.slice(before)).toEqual([]);
  });

  it('no direct route: the loopback server of the host, other addresses and DNS are unreachable', async () => {
    const before = seen.length;
    const { output } = await sandboxed(
      [
        `curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:${originPort}/direct; echo "direct=$?"`,
        `curl -sS --noproxy '*' --max-time 5 http://192.0.2.1/; echo "other=$?"`,
        'getent hosts example.com; echo "getent=$?"',
        `${PYTHON} -c "import socket; socket.getaddrinfo('example.com', 80)" 2>&1 | tail -1`,
      ].join('; '),
      { network: 'proxied' },
    );
    expect(output).toContain('Failed to connect to 127.0.0.1 port');
    expect(output).toContain('direct=7');
    expect(output).toMatch(/other=7/);
    expect(output).toContain('getent=2');
    expect(output).toMatch(/socket\.gaierror/);
    expect(seen.slice(before)).toEqual([]);
  });

  it('UDP, raw, packet, netlink and unix sockets are refused at socket() (EPERM)', async () => {
    const probe = python(
      'sockets.py',
      `
import errno, socket
cases = [
    ('udp', socket.AF_INET, socket.SOCK_DGRAM, 0),
    ('udp6', socket.AF_INET6, socket.SOCK_DGRAM, 0),
    ('raw', socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP),
    ('packet', socket.AF_PACKET, socket.SOCK_RAW, 0),
    ('netlink', socket.AF_NETLINK, socket.SOCK_RAW, 0),
    ('unix', socket.AF_UNIX, socket.SOCK_STREAM, 0),
    ('tcp', socket.AF_INET, socket.SOCK_STREAM, 0),
]
for name, family, kind, proto in cases:
    try:
        socket.socket(family, kind, proto).close()
        print(name, 'ok')
    except OSError as e:
        print(name, errno.errorcode[e.errno])
a, b = socket.socketpair()
a.sendall(b'pair'); print('socketpair', b.recv(4).decode())
`,
    );
    const { output, exitCode } = await sandboxed(probe, { network: 'proxied' });
    expect(output).toBe(
      'udp EPERM\nudp6 EPERM\nraw EPERM\npacket EPERM\nnetlink EPERM\nunix EPERM\ntcp ok\nsocketpair pair\n',
    );
    expect(exitCode).toBe(0);
  });

  it('git and python urllib honour the proxy variables; the destination sees their requests through the proxy', async () => {
    const before = seen.length;
    const { output, exitCode } = await sandboxed(
      `git ls-remote ${url('allowed.test', '/x.git')} && ${PYTHON} -c "import urllib.request; print(urllib.request.urlopen('${url('allowed.test', '/py')}').read().decode(), end='')"`,
      { network: 'proxied' },
    );
    expect(output).toBe(`${GIT_SHA}\tHEAD\n${GIT_SHA}\trefs/heads/main\norigin says hi to /py\n`);
    expect(exitCode).toBe(0);
    const requests = seen.slice(before);
    expect(requests[0]).toMatchObject({ method: 'GET', host: `allowed.test:${originPort}` });
    expect(requests[0]?.url).toMatch(/^\/x\.git\/info\/refs\?service=git-upload-pack$/);
    expect(requests.at(-1)).toEqual({ method: 'GET', url: '/py', host: `allowed.test:${originPort}` });
  });

  const [major, minor] = process.versions.node.split('.').map(Number) as [number, number];
  const nodeHonoursEnvProxy = major >= 24 || (major === 22 && minor >= 21);
  it.skipIf(!nodeHonoursEnvProxy)(
    `node fetch honours NODE_USE_ENV_PROXY (needs Node >= 24 or 22.21+; skipped on this Node ${process.versions.node}, which ignores the variable)`,
    async () => {
      const { output } = await sandboxed(
        `node -e "fetch('${url('allowed.test', '/node')}').then(r => r.text()).then(t => process.stdout.write(t))"`,
        { network: 'proxied' },
      );
      expect(output).toBe('origin says hi to /node\n');
    },
  );

  it('the bridge carries 16 MiB down and 4 MiB up intact, and passes a half-close on', async () => {
    const halfClose = python(
      'half-close.py',
      `
import socket, sys
s = socket.create_connection(('127.0.0.1', 3128))
s.sendall(b'CONNECT allowed.test:${counterPort} HTTP/1.1\\r\\nHost: allowed.test:${counterPort}\\r\\n\\r\\n')
head = b''
while b'\\r\\n\\r\\n' not in head:
    head += s.recv(1)
assert head.startswith(b'HTTP/1.1 200'), head
s.sendall(b'x' * (1 << 20))
s.shutdown(socket.SHUT_WR)
answer = b''
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    answer += chunk
print(answer.decode(), end='')
`,
    );
    const { output, exitCode } = await sandboxed(
      [
        `curl -sS ${url('allowed.test', '/big')} | sha256sum`,
        'head -c 4194304 /dev/urandom > up.bin',
        'sha256sum < up.bin',
        `curl -sS --data-binary @up.bin ${url('allowed.test', '/upload')}`,
        halfClose,
      ].join(' && '),
      { network: 'proxied' },
    );
    const lines = output.split('\n');
    expect(lines[0]).toBe(`${bigDigest}  -`);
    const uploaded = lines[1]?.split(' ')[0];
    expect(lines[2]).toBe(`uploaded 4194304 ${uploaded}`);
    expect(lines[3]).toBe('received 1048576');
    expect(exitCode).toBe(0);
  });

  it('the helper is the sandbox’s init: not the command’s child, its own session, not dumpable, deaf to Ctrl-C', async () => {
    const script = [
      `for d in /proc/[0-9]*; do [ "$(cat $d/comm 2>/dev/null)" = ux-sandbox-net ] && h=\${d#/proc/}; done`,
      // pid, then ppid, process group and session, of the helper and of this shell
      'echo "helper=$h $(sed "s/.*) //" /proc/$h/stat | cut -d" " -f2-4) shell=$$ $(sed "s/.*) //" /proc/$$/stat | cut -d" " -f2-4)"',
      // bwrap's own init would be dumpable and unfiltered: writing its memory would be a way out.
      `${PYTHON} -c "
try:
    open('/proc/1/mem', 'r+b'); print('init-mem=writable')
except PermissionError:
    print('init-mem=refused')"`,
      'readlink /proc/1/fd/0 >/dev/null 2>&1 && echo fd=readable || echo fd=refused',
      `${PYTHON} -c "import os
try:
    os.waitpid(-1, os.WNOHANG); print('children=yes')
except ChildProcessError:
    print('children=none')"`,
      'trap "echo got-int" INT',
      'echo ready',
      'while [ ! -e go ]; do sleep 0.05; done',
      `curl -sS ${url('allowed.test', '/after-ctrl-c')}`,
    ].join('\n');
    const { output, exitCode } = await sandboxed(script, {
      network: 'proxied',
      during: async (child) => {
        await waitForOutput(child, 'ready', 10_000);
        const helpers = liveHelpers();
        expect(helpers).toHaveLength(1);
        await child.interrupt();
        await waitForOutput(child, 'got-int', 5_000);
        expect(liveHelpers()).toEqual(helpers);
        writeFileSync(join(ws, 'go'), '');
      },
    });
    rmSync(join(ws, 'go'), { force: true });
    const ids = /helper=(\d+) (\d+) (\d+) (\d+) shell=(\d+) (\d+) (\d+) (\d+)/.exec(output);
    expect(ids, output).not.toBeNull();
    const [, helper, , helperGroup, helperSession, shell, shellParent, shellGroup, shellSession] =
      ids!.map(Number);
    expect(helper).toBe(1);
    expect(shellParent).toBe(1);
    expect(shell).not.toBe(1);
    expect(helperSession).not.toBe(shellSession);
    expect(helperGroup).not.toBe(shellGroup);
    expect(output).toContain('init-mem=refused');
    expect(output).toContain('fd=refused');
    expect(output).toContain('children=none');
    expect(output).toContain('got-int');
    expect(output).toContain('origin says hi to /after-ctrl-c');
    expect(exitCode).toBe(0);
  });

  it('the bridge stays on the proxy’s socket when the command swaps the directory that holds it', async () => {
    // A proxy whose socket lies in the writable workspace, and another socket of the same name elsewhere.
    const second = createNetworkProxy({
      policy: { allow: ['allowed.test'] },
      resolve: async () => ['127.0.0.1'],
    });
    onTestFinished(() => second.close());
    mkdirSync(join(ws, 'net'), { recursive: true });
    onTestFinished(() => rmSync(join(ws, 'net'), { recursive: true, force: true }));
    onTestFinished(() => rmSync(join(ws, 'net.old'), { recursive: true, force: true }));
    await second.listenUnix(join(ws, 'net', 'proxy.sock'));
    const decoyDir = join(outside, 'decoy');
    mkdirSync(decoyDir, { recursive: true });
    const decoy = createServer((socket) => socket.end('HTTP/1.0 200 OK\r\n\r\nthe decoy answered\n'));
    await new Promise<void>((resolve) => decoy.listen(join(decoyDir, 'proxy.sock'), resolve));
    onTestFinished(() => new Promise<void>((resolve) => decoy.close(() => resolve())));

    const plan = await backend.plan({
      argv: [
        '/bin/bash',
        '-c',
        `mv net net.old && ln -s '${decoyDir}' net && curl -sS ${url('allowed.test', '/pinned')}`,
      ],
      cwd: ws,
      env: { PATH, HOME: home },
      policy: {
        ...policy({ network: 'proxied' }),
        networkProxy: { unixSocket: join(ws, 'net', 'proxy.sock') },
      },
      tty: false,
    });
    onTestFinished(() => plan.cleanup?.());
    const child = await spawner.spawn({
      argv: plan.argv,
      cwd: plan.cwd,
      env: plan.env,
      tty: false,
      stdin: 'closed',
    });
    onTestFinished(() => child.terminate());
    const { status, text } = await runToEnd(child, 20_000);
    expect(text).toBe('origin says hi to /pinned\n');
    expect(status.exitCode).toBe(0);
    await expectNoHelperLeft();
  });

  it('a command killed by a signal still reports it, and its helper goes with it', async () => {
    const { exitCode } = await sandboxed('kill -TERM $$', { network: 'proxied' });
    expect(exitCode).toBe(128 + 15);
    const failed = await sandboxed('exit 42', { network: 'proxied' });
    expect(failed.exitCode).toBe(42);
    const missing = await sandboxed('exec /no/such/program', { network: 'proxied' });
    expect(missing.exitCode).toBe(127);
  });

  it('Ctrl-C ends a command with the default handler (130); terminate ends one that ignores SIGTERM, helper and all', async () => {
    const interrupted = await sandboxed('echo ready; sleep 30', {
      network: 'proxied',
      during: async (child) => {
        await waitForOutput(child, 'ready', 10_000);
        await child.interrupt();
      },
    });
    expect(interrupted.exitCode).toBe(130);
    // It ignores SIGTERM and loops for ever: that the run ends at all is the proof (no clock needed).
    const stubborn = await sandboxed("trap '' TERM; echo ready; while :; do sleep 0.1; done", {
      network: 'proxied',
      allowUnixSockets: [join(outside, 'a.sock')],
      during: async (child) => {
        await waitForOutput(child, 'ready', 10_000);
        expect(liveHelpers()).toHaveLength(1);
        await child.terminate();
      },
    });
    // SIGKILL of the group after the grace: bwrap dies, and the helper (its own session) with it.
    expect(stubborn.exitCode).not.toBe(0);
  });
});

describe('unix sockets outside the sandbox', () => {
  const a = () => join(outside, 'a.sock');
  const b = () => join(outside, 'b.sock');

  it('network "enabled": refused at socket() (EPERM); socketpairs still work', async () => {
    const { output } = await sandboxed(
      `${python('unix.py', UNIX_PROBE, a(), b())}; ${PYTHON} -c "import socket; x, y = socket.socketpair(); x.send(b'ok'); print('pair', y.recv(2).decode())"`,
      { network: 'enabled' },
    );
    expect(output).toBe('a.sock socket:EPERM\nb.sock socket:EPERM\npair ok\n');
  });

  it('network "enabled" with a listed socket: that one connects, any other path or address gets EACCES, IP still works', async () => {
    const before = seen.length;
    const { output } = await sandboxed(
      `${python('unix.py', UNIX_PROBE, a(), b(), `${outside}/../outside/a.sock`, '@abstract', 'a.sock')}; curl -sS ${url('127.0.0.1', '/enabled-direct')}`,
      { network: 'enabled', allowUnixSockets: [a()] },
    );
    expect(output).toBe(
      'a.sock ok:hello from a\nb.sock connect:EACCES\na.sock connect:EACCES\n@abstract connect:EACCES\na.sock connect:EACCES\norigin says hi to /enabled-direct\n',
    );
    expect(seen.slice(before).map((r) => r.url)).toEqual(['/enabled-direct']);
  });

  it('a listed name the command points elsewhere (a symbolic link it can rewrite) is refused', async () => {
    const link = join(ws, 'agent.sock');
    rmSync(link, { force: true });
    symlinkSync(a(), link);
    onTestFinished(() => rmSync(link, { force: true }));
    const probe = python('unix.py', UNIX_PROBE, link);
    const { output } = await sandboxed(`${probe}; ln -sfn '${b()}' agent.sock; ${probe}`, {
      network: 'enabled',
      allowUnixSockets: [link],
    });
    expect(output).toBe('agent.sock ok:hello from a\nagent.sock connect:EACCES\n');
  });

  it('a connect() that blocks (a full backlog) holds up no other connect()', async () => {
    const slow = join(ws, 'slow.sock');
    rmSync(slow, { force: true });
    onTestFinished(() => rmSync(slow, { force: true }));
    const probe = python(
      'blocking.py',
      `
import os, socket, sys, threading, time
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1])
server.listen(0)  # never accepts: the first connection fills the queue, the second blocks
first = socket.socket(socket.AF_UNIX)
first.connect(sys.argv[1])
def stuck():
    second = socket.socket(socket.AF_UNIX)
    second.connect(sys.argv[1])
    print('second connected?!', flush=True)
threading.Thread(target=stuck, daemon=True).start()
time.sleep(0.3)
started = time.monotonic()
other = socket.socket(socket.AF_UNIX)
other.connect(sys.argv[2])
print(other.recv(100).decode().strip(), 'within', 'a second' if time.monotonic() - started < 1 else 'too long', flush=True)
os._exit(0)
`,
      slow,
      a(),
    );
    const { output, exitCode } = await sandboxed(probe, {
      network: 'enabled',
      allowUnixSockets: [a(), slow],
    });
    expect(output).toBe('hello from a within a second\n');
    expect(exitCode).toBe(0);
  });

  it('network "restricted" with a listed socket: it connects, others get EACCES, still no IP', async () => {
    const { output } = await sandboxed(
      `${python('unix.py', UNIX_PROBE, a(), b())}; ${PYTHON} -c "import socket; socket.socket()" 2>&1 | tail -1`,
      { network: 'restricted', allowUnixSockets: [a()] },
    );
    expect(output).toBe(
      'a.sock ok:hello from a\nb.sock connect:EACCES\nPermissionError: [Errno 1] Operation not permitted\n',
    );
  });

  it('restricted reads: a listed socket is bound in at its own path, nothing else of its directory shows', async () => {
    const { output } = await sandboxed(`ls '${outside}'; ${python('unix.py', UNIX_PROBE, a(), b())}`, {
      network: 'restricted',
      reads: 'minimal',
      allowUnixSockets: [a()],
    });
    expect(output).toBe('a.sock\na.sock ok:hello from a\nb.sock connect:EACCES\n');
  });

  it('network "proxied" with a listed socket: the bridge and the supervisor work side by side', async () => {
    const { output } = await sandboxed(
      `${python('unix.py', UNIX_PROBE, a(), b(), proxySocket)}; curl -sS ${url('allowed.test', '/both')}; curl -sS --noproxy '*' http://127.0.0.1:${originPort}/; echo "direct=$?"`,
      { network: 'proxied', allowUnixSockets: [a()] },
    );
    expect(output).toMatch(
      /^a\.sock ok:hello from a\nb\.sock connect:EACCES\nproxy\.sock connect:EACCES\norigin says hi to \/both\n.*direct=7\n$/s,
    );
  });
});
