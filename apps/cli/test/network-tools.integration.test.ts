// Network by domain end to end, from the side of the tools a command runs: curl through the
// proxy's two doors (HTTP CONNECT and SOCKS5), the proxy variables the command sees, that nothing but
// the proxy leads out (UDP, raw sockets, DNS, a direct connect), git and python honouring the
// variables, unix sockets outside the workspace, and what `ux exec --json` reports of a refusal.
// All through the shipped `ux` with the real bubblewrap sandbox and the session's own proxy; the names
// `allowed.test` and `denied.test` reach this host's 127.0.0.1 through UX_NETWORK_PROXY_HOSTS.
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { runUx, type UxResult } from './cli-harness.js';
import { CURL, httpServer, type NetworkHome, networkHome, proxyDirectories } from './network-harness.js';

useLeakCheck();

const hasGit = spawnSync('git', ['--version']).status === 0;
// The system's python, not a version manager's shim (which wants files of its own user).
const PYTHON = ['/usr/bin/python3', '/usr/local/bin/python3'].find((path) => existsSync(path));
const hasPython = PYTHON !== undefined;

/** `ux sandbox --allow-domain allowed.test ARGS… -- sh -c SCRIPT` in `home`. */
function sandbox(home: NetworkHome, script: string, args: string[] = []): Promise<UxResult> {
  return runUx(['sandbox', '--allow-domain', 'allowed.test', ...args, '--', 'sh', '-c', script], home);
}

/** A Python script in the workspace (readable inside the sandbox); returns the command that runs it. */
function python(home: NetworkHome, name: string, source: string): string {
  writeFileSync(join(home.workspace, name), source);
  return `${PYTHON} ${name}`;
}

/** The JSON lines `ux exec --json` printed: its network_access events and the call's result. */
function jsonLines(stdout: string) {
  const lines = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  const results = lines.filter((line) => line.type === undefined);
  expect(results, stdout).toHaveLength(1);
  return { events: lines.filter((line) => line.type === 'network_access'), result: results[0]! };
}

describe('ux sandbox --allow-domain: the tools a command runs', () => {
  it('curl reaches an allowed host through HTTP CONNECT and through SOCKS5 with remote resolution; SOCKS5 to a denied host gets reply 2', async () => {
    const server = await httpServer();
    const home = networkHome();
    // The SOCKS5 exchange by hand, where python3 is there to speak it.
    const socksProbe = hasPython
      ? python(
          home,
          'socks.py',
          `
import os, socket
# The proxy named by ALL_PROXY (socks5h://HOST:PORT), spoken to by hand: greeting, then CONNECT by name.
host, port = os.environ['ALL_PROXY'].split('//')[1].split(':')
s = socket.create_connection((host, int(port)), timeout=10)
s.sendall(b'\\x05\\x01\\x00')
print('greeting', s.recv(2).hex())
name = b'denied.test'
s.sendall(b'\\x05\\x01\\x00\\x03' + bytes([len(name)]) + name + (${server.port}).to_bytes(2, 'big'))
print('reply', s.recv(2).hex())
`,
        )
      : 'true';
    const result = await sandbox(
      home,
      [
        `${CURL} -p --noproxy '' ${server.url('allowed.test')}; echo "connect=$?"`,
        `${CURL} -x "$ALL_PROXY" ${server.url('allowed.test')}; echo "socks=$?"`,
        `${CURL} -x "$ALL_PROXY" ${server.url('denied.test')} 2>&1; echo "socks-denied=$?"`,
        socksProbe,
      ].join('; '),
    );
    expect(result.stdout.split('\n'), result.stderr).toEqual([
      `hello from allowed.test:${server.port}`,
      'connect=0',
      `hello from allowed.test:${server.port}`,
      'socks=0',
      // curl 7.x prints the SOCKS5 reply code, (2): "connection not allowed by ruleset"; curl 8 its text.
      expect.stringMatching(
        /^curl: \(97\) (Can't complete SOCKS5 connection to denied\.test\. \(2\)|.*not allowed by ruleset.*)$/i,
      ),
      'socks-denied=97',
      // VER 5, no authentication; then VER 5, REP 2: connection not allowed by ruleset.
      ...(hasPython ? ['greeting 0500', 'reply 0502'] : []),
      '',
    ]);
    expect(result.status).toBe(0);
    // Both doors went through to the server, with the name the command asked for; the denied host saw nothing.
    expect(server.hosts).toEqual([`allowed.test:${server.port}`, `allowed.test:${server.port}`]);
    expect(proxyDirectories(home)).toEqual([]);
  });

  it('the command sees the proxy variables pointing at the bridge, and not ux’s test switch', async () => {
    const home = networkHome();
    const result = await runUx(['sandbox', '--allow-domain', 'allowed.test', '--', 'env'], home);
    expect(result.status, result.stderr).toBe(0);
    const env = Object.fromEntries(
      result.stdout
        .trim()
        .split('\n')
        .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
    );
    const noProxy = 'localhost,127.0.0.1,::1';
    expect(env).toMatchObject({
      HTTP_PROXY: 'http://127.0.0.1:3128',
      HTTPS_PROXY: 'http://127.0.0.1:3128',
      ALL_PROXY: 'socks5h://127.0.0.1:3128',
      http_proxy: 'http://127.0.0.1:3128',
      https_proxy: 'http://127.0.0.1:3128',
      all_proxy: 'socks5h://127.0.0.1:3128',
      NO_PROXY: noProxy,
      no_proxy: noProxy,
      FTP_PROXY: 'socks5h://127.0.0.1:3128',
      GRPC_PROXY: 'socks5h://127.0.0.1:3128',
      RSYNC_PROXY: '127.0.0.1:3128',
      DOCKER_HTTP_PROXY: 'http://127.0.0.1:3128',
      DOCKER_HTTPS_PROXY: 'http://127.0.0.1:3128',
      CLOUDSDK_PROXY_TYPE: 'http',
      CLOUDSDK_PROXY_ADDRESS: '127.0.0.1',
      CLOUDSDK_PROXY_PORT: '3128',
      NODE_USE_ENV_PROXY: '1',
      UX_SANDBOX: 'bwrap',
      UX_SANDBOX_NETWORK: 'proxied',
    });
    // The test switch is ux's (its proxy reads it), not the command's. Earlier builds passed it on to the
    // command (a product bug, fixed by without-test-switches.ts): this guards the fix.
    expect(env).not.toHaveProperty('UX_NETWORK_PROXY_HOSTS');
    expect(result.stderr).toContain('UX_NETWORK_PROXY_HOSTS is set');
    expect(proxyDirectories(home)).toEqual([]);
  });

  it.skipIf(!hasPython)(
    `has no other route: UDP and raw sockets EPERM, no DNS, no direct TCP to the host's loopback${hasPython ? '' : ' (skipped: no python3)'}`,
    async () => {
      const server = await httpServer();
      const home = networkHome();
      const probe = python(
        home,
        'routes.py',
        `
import errno, socket
def attempt(name, action):
    try:
        action()
        print(name, 'ok')
    except socket.gaierror:
        print(name, 'gaierror')
    except OSError as e:
        print(name, type(e).__name__, errno.errorcode[e.errno])
attempt('udp', lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', ${server.port})))
attempt('raw', lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt('dns', lambda: socket.getaddrinfo('example.com', 80))
attempt('tcp-socket', lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM).close())
attempt('direct', lambda: socket.create_connection(('127.0.0.1', ${server.port}), timeout=5))
`,
      );
      const result = await sandbox(
        home,
        [
          probe,
          'getent hosts example.com; echo "getent=$?"',
          `${CURL} --noproxy '*' http://127.0.0.1:${server.port}/ 2>/dev/null; echo "curl-direct=$?"`,
        ].join('; '),
      );
      expect(result.stdout, result.stderr).toBe(
        [
          'udp PermissionError EPERM',
          'raw PermissionError EPERM',
          'dns gaierror',
          // A TCP socket can be made (for the bridge); it just leads nowhere but the sandbox's own loopback.
          'tcp-socket ok',
          'direct ConnectionRefusedError ECONNREFUSED',
          'getent=2',
          'curl-direct=7',
          '',
        ].join('\n'),
      );
      expect(result.status).toBe(0);
      expect(server.hosts).toEqual([]);
      expect(proxyDirectories(home)).toEqual([]);
    },
  );

  it.skipIf(!hasGit)(
    `git honours the proxy variables: the server sees its ref request under the name${hasGit ? '' : ' (skipped: no git)'}`,
    async () => {
      const server = await httpServer();
      const home = networkHome();
      const result = await sandbox(
        home,
        `GIT_TERMINAL_PROMPT=0 git ls-remote http://allowed.test:${server.port}/repo.git 2>&1; echo "git=$?"`,
      );
      // The server is no git server, so git gives up on its answer: but it asked, through the proxy.
      expect(result.stdout, result.stderr).toBe(
        `fatal: http://allowed.test:${server.port}/repo.git/info/refs not valid: is this a git repository?\ngit=128\n`,
      );
      expect(server.requests).toEqual([
        `GET /repo.git/info/refs?service=git-upload-pack allowed.test:${server.port}`,
      ]);
      expect(result.status).toBe(0);
      expect(proxyDirectories(home)).toEqual([]);
    },
  );

  it.skipIf(!hasPython)(
    `python3 urllib honours the proxy variables${hasPython ? '' : ' (skipped: no python3)'}`,
    async () => {
      const server = await httpServer();
      const home = networkHome();
      const result = await runUx(
        [
          'sandbox',
          '--allow-domain',
          'allowed.test',
          '--',
          PYTHON!,
          '-c',
          `import urllib.request;print(urllib.request.urlopen("${server.url('allowed.test')}").read().decode())`,
        ],
        home,
      );
      expect(result.stdout, result.stderr).toBe(`hello from allowed.test:${server.port}\n\n`);
      expect(result.status).toBe(0);
      expect(server.hosts).toEqual([`allowed.test:${server.port}`]);
      expect(proxyDirectories(home)).toEqual([]);
    },
  );
});

describe.skipIf(!hasPython)(
  `unix sockets outside the workspace${hasPython ? '' : ' (skipped: no python3)'}`,
  () => {
    const PROBE = `
import errno, socket, sys
for path in sys.argv[1:]:
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    except OSError as e:
        print('socket', type(e).__name__, errno.errorcode[e.errno])
        continue
    try:
        s.connect(path)
        print('connected', s.recv(100).decode().strip())
    except OSError as e:
        print('connect', type(e).__name__, errno.errorcode[e.errno])
`;

    /** A unix socket server at DIR/NAME.sock answering `NAME says hi`; counts its connections. */
    async function unixServer(dir: string, name: string) {
      const path = join(dir, `${name}.sock`);
      let connections = 0;
      const server = createNetServer((socket) => {
        connections += 1;
        socket.on('error', () => {});
        socket.end(`${name} says hi\n`);
      });
      await new Promise<void>((resolve) => server.listen(path, resolve));
      onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
      return { path, connections: () => connections };
    }

    it.each([
      ['--network', ['--network']],
      ['--allow-domain allowed.test', ['--allow-domain', 'allowed.test']],
    ])(
      'under %s: refused unless listed with --allow-unix-socket, and then only that one',
      async (_, mode) => {
        const home = networkHome();
        const outside = tempDir('ux-unix-');
        const a = await unixServer(outside, 'a');
        const b = await unixServer(outside, 'b');
        const probe = python(home, 'unix.py', PROBE);
        const argv = [...probe.split(' '), a.path, b.path];

        const refused = await runUx(['sandbox', ...mode, '--', ...argv], home);
        expect(refused.stdout, refused.stderr).toBe(
          'socket PermissionError EPERM\nsocket PermissionError EPERM\n',
        );
        expect(a.connections()).toBe(0);

        const allowed = await runUx(['sandbox', ...mode, '--allow-unix-socket', a.path, '--', ...argv], home);
        expect(allowed.stdout, allowed.stderr).toBe('connected a says hi\nconnect PermissionError EACCES\n');
        expect(allowed.status).toBe(0);
        expect(a.connections()).toBe(1);
        expect(b.connections()).toBe(0);
        expect(proxyDirectories(home)).toEqual([]);
      },
    );
  },
);

describe('ux exec --json --allow-domain: what the door reports', () => {
  it('a refusal by the proxy marks the result a sandbox denial and comes as a denied network_access event', async () => {
    const server = await httpServer();
    // Only a failure inside the early-exit window is judged a denial (docs/reference/door.md §5); a
    // loaded machine can take longer than the default 150 ms to run curl through the proxy.
    const home = networkHome({ config: 'early_exit_window_ms = 5000\n' });
    const exec = (command: string) =>
      runUx(['exec', '--json', '--approval', 'never', '--allow-domain', 'allowed.test', '--', command], home);

    // A plain request: the proxy's 403 body is the text recognised.
    const plain = await exec(`${CURL} --fail-with-body ${server.url('denied.test')}`);
    const first = jsonLines(plain.stdout);
    expect(first.events).toEqual([
      {
        type: 'network_access',
        host: 'denied.test',
        port: server.port,
        protocol: 'http',
        decision: 'denied',
        decided_by: 'policy',
        denial: 'not_in_allow_list',
        bytes_up: 0,
        bytes_down: 0,
        duration_ms: expect.any(Number),
      },
    ]);
    expect(first.result).toMatchObject({ exit_code: 22, sandbox_denied: true });
    // stdout and stderr are merged, in whichever order they came.
    expect(String(first.result.output).trim().split('\n').sort()).toEqual([
      'curl: (22) The requested URL returned error: 403',
      'ux: network access to "denied.test" is not allowed by the sandbox\'s network policy (it is not in network.allow); add it to network.allow',
    ]);
    expect(plain.status).toBe(22);

    // Through CONNECT: curl's line for the refused tunnel is the text recognised.
    const tunnel = await exec(`${CURL} -p ${server.url('denied.test')}`);
    const second = jsonLines(tunnel.stdout);
    expect(second.events).toEqual([
      expect.objectContaining({
        host: 'denied.test',
        port: server.port,
        protocol: 'https',
        decision: 'denied',
        denial: 'not_in_allow_list',
        bytes_up: 0,
        bytes_down: 0,
      }),
    ]);
    expect(second.result).toMatchObject({
      exit_code: 56,
      sandbox_denied: true,
      output: 'curl: (56) CONNECT tunnel failed, response 403\n',
    });
    expect(tunnel.status).toBe(56);
    expect(server.hosts).toEqual([]);
    expect(proxyDirectories(home)).toEqual([]);
  });

  it('an allowed fetch comes as an allowed network_access event with the bytes it moved', async () => {
    const server = await httpServer();
    const home = networkHome();
    const result = await runUx(
      [
        'exec',
        '--json',
        '--approval',
        'never',
        '--allow-domain',
        'allowed.test',
        '--',
        `${CURL} ${server.url('allowed.test')}`,
      ],
      home,
    );
    const body = `hello from allowed.test:${server.port}\n`;
    const { events, result: call } = jsonLines(result.stdout);
    expect(events).toEqual([
      {
        type: 'network_access',
        host: 'allowed.test',
        port: server.port,
        protocol: 'http',
        decision: 'allowed',
        decided_by: 'policy',
        address: '127.0.0.1',
        bytes_up: expect.any(Number),
        bytes_down: expect.any(Number),
        duration_ms: expect.any(Number),
      },
    ]);
    const event = events[0] as { bytes_up: number; bytes_down: number };
    // Up: at least the request line; down: the body and the response's headers.
    expect(event.bytes_up).toBeGreaterThan(
      `GET / HTTP/1.1\r\nHost: allowed.test:${server.port}\r\n\r\n`.length,
    );
    expect(event.bytes_down).toBeGreaterThan(Buffer.byteLength(body) + 'HTTP/1.1 200 OK\r\n\r\n'.length);
    expect(call).toMatchObject({ exit_code: 0, output: body });
    expect(call).not.toHaveProperty('sandbox_denied');
    expect(result.status).toBe(0);
    expect(server.hosts).toEqual([`allowed.test:${server.port}`]);
    expect(proxyDirectories(home)).toEqual([]);
  });
});
