// Network by domain end to end, through the shipped `ux`: the session's allow-list proxy (one per
// `ux sandbox` run, `ux exec` run, `ux mcp` server), the bubblewrap sandbox that reaches only it, the
// config, flags and requirements that decide the lists, `ux doctor`, and the unix socket allow-list.
// Test servers listen on this host's 127.0.0.1; the names `allowed.test`, `denied.test` and
// `other.test` reach them through UX_NETWORK_PROXY_HOSTS, the proxy's host mapping for tests.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer as createNetServer } from 'node:net';
import { join } from 'node:path';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { PROXY_BRIDGE_PORT, uxRuntimeRoot } from '@ux/protocol-utils';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, connectMcp, mcpClient, runUx, uniqueMarker, waitForCommandRunning } from './cli-harness.js';
import { CURL, httpServer, networkHome, proxyDirectories } from './network-harness.js';

useLeakCheck();

describe('ux sandbox --allow-domain', () => {
  it('reaches a listed host through the proxy, gets the 403 text for the rest, and has no other route', async () => {
    const server = await httpServer();
    const home = networkHome();
    const script = [
      `${CURL} ${server.url('allowed.test')}`,
      `${CURL} ${server.url('denied.test')}; echo`,
      `${CURL} ${server.url('other.test')}; echo`,
      `${CURL} --noproxy '*' http://127.0.0.1:${server.port}/ || echo NO-DIRECT-ROUTE`,
      // The proxy's socket lives in ux's runtime root, of which a command sees only that socket's path
      // (bwrap's mount point for it), never another runtime file (this ux's own bwrap directory).
      `echo "RUNTIME: $(ls -A ${uxRuntimeRoot()} 2>/dev/null | tr '\\n' ' ')"`,
    ].join('; ');
    const result = await runUx(
      [
        'sandbox',
        '--allow-domain',
        'allowed.test',
        '-c',
        'sandbox_workspace_write.network={deny=["denied.test"]}',
        '--',
        'sh',
        '-c',
        script,
      ],
      home,
    );
    expect(result.stdout).toContain('hello from allowed.test');
    expect(result.stdout).toContain(
      'ux: network access to "denied.test" is not allowed by the sandbox\'s network policy (deny list',
    );
    // Nobody can be asked in ux sandbox (the terminal is the command's): hosts outside the list are denied.
    expect(result.stdout).toContain('ux: network access to "other.test" is not allowed');
    expect(result.stdout).toContain('NO-DIRECT-ROUTE');
    // The socket's directory was out of the command's sight while it ran, and is gone now.
    expect(result.stdout).toMatch(/^RUNTIME: (net-\d+-[0-9a-f]{8} )?$/m);
    expect(proxyDirectories(home)).toEqual([]);
    expect(server.hosts).toEqual([`allowed.test:${server.port}`]);
    expect(result.stderr).toContain('UX_NETWORK_PROXY_HOSTS is set');
    expect(result.status).toBe(0);
  });

  it('--network-log writes one JSON line per connection; the test switch stays out of the command', async () => {
    const server = await httpServer();
    const home = networkHome();
    const log = join(home.tmp, 'net.jsonl');
    const script = `${CURL} ${server.url('allowed.test')}; ${CURL} ${server.url('other.test')}; echo; echo "switch=\${UX_NETWORK_PROXY_HOSTS-unset}"`;
    const result = await runUx(
      ['sandbox', '--allow-domain', 'allowed.test', '--network-log', log, '--', 'sh', '-c', script],
      home,
    );
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('switch=unset');
    const lines = readFileSync(log, 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toEqual([
      expect.objectContaining({
        type: 'network_access',
        host: 'allowed.test',
        port: server.port,
        protocol: 'http',
        decision: 'allowed',
        decided_by: 'policy',
        bytes_up: expect.any(Number),
        bytes_down: expect.any(Number),
      }),
      expect.objectContaining({
        host: 'other.test',
        decision: 'denied',
        denial: 'not_in_allow_list',
        bytes_up: 0,
        bytes_down: 0,
      }),
    ]);
    expect(lines[0].bytes_down).toBeGreaterThan(0);
    expect(proxyDirectories(home)).toEqual([]);
  });

  it('--network-log without a network by domain, or to a file it cannot open, is refused before anything runs', async () => {
    const home = networkHome();
    const marker = join(home.workspace, 'ran');
    const off = await runUx(['sandbox', '--network-log', '-', '--', 'touch', marker], home);
    expect(off.status).toBe(2);
    expect(off.stderr).toContain(
      'ux: --network-log logs the connections of a network by domain; add --allow-domain HOST',
    );
    const missing = await runUx(
      [
        'sandbox',
        '--allow-domain',
        'allowed.test',
        '--network-log',
        '/nonexistent/net.jsonl',
        '--',
        'touch',
        marker,
      ],
      home,
    );
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain(
      'ux: --network-log /nonexistent/net.jsonl: cannot open /nonexistent/net.jsonl for appending (ENOENT)',
    );
    expect(existsSync(marker)).toBe(false);
    expect(proxyDirectories(home)).toEqual([]);
  });

  it('a listed .local name goes through the proxy: NO_PROXY names the sandbox loopback only', async () => {
    const server = await httpServer();
    const home = networkHome();
    home.env.UX_NETWORK_PROXY_HOSTS = 'printer.local=127.0.0.1';
    const result = await runUx(
      [
        'sandbox',
        '--allow-domain',
        'printer.local',
        '--',
        'sh',
        '-c',
        `echo "$NO_PROXY"; ${CURL} ${server.url('printer.local')}`,
      ],
      home,
    );
    expect(result.stdout).toBe(`localhost,127.0.0.1,::1\nhello from printer.local:${server.port}\n`);
    expect(result.status).toBe(0);
    expect(server.hosts).toEqual([`printer.local:${server.port}`]);
  });

  it('takes an IP address as an allow entry (that address only)', async () => {
    const server = await httpServer();
    const home = networkHome();
    const viaProxy = `--noproxy '' --proxy http://127.0.0.1:${PROXY_BRIDGE_PORT}`;
    const result = await runUx(
      [
        'sandbox',
        '--allow-domain',
        '127.0.0.1',
        '--',
        'sh',
        '-c',
        `${CURL} ${viaProxy} http://127.0.0.1:${server.port}/; echo; ${CURL} ${viaProxy} http://127.0.0.2:${server.port}/`,
      ],
      home,
    );
    expect(result.stdout).toContain(`hello from 127.0.0.1:${server.port}`);
    expect(result.stdout).toContain('ux: network access to 127.0.0.2 (an IP address) is not allowed');
    expect(proxyDirectories(home)).toEqual([]);
  });

  it('removes the proxy directory when a signal stops ux while it starts', async () => {
    const home = networkHome();
    const child = spawn(
      process.execPath,
      [BIN, 'sandbox', '--allow-domain', 'allowed.test', '--', 'sleep', '30'],
      {
        cwd: home.workspace,
        env: home.env,
        stdio: 'ignore',
      },
    );
    const closed = new Promise<NodeJS.Signals | number | null>((resolve) =>
      child.once('close', (code, signal) => resolve(signal ?? code)),
    );
    // The moment the directory exists, before or after the command's own signal handlers: either way
    // ux ends by the signal (or with 128 + 15) and leaves nothing behind.
    const deadline = Date.now() + 10_000;
    while (proxyDirectories(home).length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 5));
    child.kill('SIGTERM');
    // 143 or 137: the sandbox passes SIGTERM on, and kills what is still starting after a grace.
    expect([143, 137, 'SIGTERM']).toContain(await closed);
    expect(proxyDirectories(home)).toEqual([]);
  });

  it('ends the command and removes the proxy directory on SIGTERM', async () => {
    const home = networkHome();
    const child = spawn(
      process.execPath,
      [BIN, 'sandbox', '--allow-domain', 'allowed.test', '--', 'sh', '-c', 'touch started; sleep 30'],
      { cwd: home.workspace, env: home.env, stdio: 'ignore' },
    );
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    const deadline = Date.now() + 10_000;
    while (!existsSync(join(home.workspace, 'started')) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(proxyDirectories(home, child.pid)).toHaveLength(1);
    child.kill('SIGTERM');
    expect(await closed).toBe(128 + 15);
    expect(proxyDirectories(home, child.pid)).toEqual([]);
  });
});

describe('ux exec --allow-domain', () => {
  it('reaches a listed host, refuses the rest without asking under never, and reports each connection with --json', async () => {
    const server = await httpServer();
    const home = networkHome({ config: 'approval_policy = "never"\n' });
    const result = await runUx(
      [
        'exec',
        '--json',
        '--allow-domain',
        'allowed.test',
        '--',
        `${CURL} ${server.url('allowed.test')}; ${CURL} ${server.url('other.test')}`,
      ],
      home,
    );
    const lines = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const events = lines.filter((line) => line.type === 'network_access');
    expect(events).toEqual([
      expect.objectContaining({
        host: 'allowed.test',
        port: server.port,
        protocol: 'http',
        decision: 'allowed',
        decided_by: 'policy',
        address: '127.0.0.1',
      }),
      expect.objectContaining({
        host: 'other.test',
        decision: 'denied',
        decided_by: 'policy',
        denial: 'not_in_allow_list',
      }),
    ]);
    const output = String(lines.find((line) => line.type === undefined)?.output);
    expect(output).toContain('hello from allowed.test');
    // Under never nobody could answer, so the proxy is given no question to ask.
    expect(output).toContain(
      'ux: network access to "other.test" is not allowed by the sandbox\'s network policy (it is not in network.allow); add it to network.allow',
    );
    expect(server.hosts).toEqual([`allowed.test:${server.port}`]);
    expect(proxyDirectories(home)).toEqual([]);
    expect(result.status).toBe(0);
  });

  it('takes the lists from config.toml, the deny list winning', async () => {
    const server = await httpServer();
    const home = networkHome({
      config:
        'approval_policy = "never"\n[sandbox_workspace_write]\nnetwork = { allow = ["allowed.test", "denied.test"], deny = ["denied.test"] }\n',
    });
    const result = await runUx(
      ['exec', '--', `${CURL} ${server.url('allowed.test')}; ${CURL} ${server.url('denied.test')}`],
      home,
    );
    expect(result.stdout).toContain('hello from allowed.test');
    expect(result.stdout).toContain(
      'ux: network access to "denied.test" is not allowed by the sandbox\'s network policy (deny list',
    );
    expect(server.hosts).toEqual([`allowed.test:${server.port}`]);
    expect(proxyDirectories(home)).toEqual([]);
  });

  it('in read-only mode takes [sandbox_read_only] network', async () => {
    const server = await httpServer();
    const home = networkHome({
      config:
        'approval_policy = "never"\nsandbox_mode = "read-only"\n[sandbox_read_only]\nnetwork = { allow = ["allowed.test"] }\n',
    });
    const result = await runUx(['exec', '--', `${CURL} ${server.url('allowed.test')}`], home);
    expect(result.stdout).toContain('hello from allowed.test');
  });

  it('removes the proxy directory when SIGTERM stops ux', async () => {
    const home = networkHome({ config: 'approval_policy = "never"\n' });
    const marker = uniqueMarker();
    const child = spawn(
      process.execPath,
      [BIN, 'exec', '--allow-domain', 'allowed.test', '--', `sleep 30; echo ${marker}`],
      { cwd: home.workspace, env: home.env, stdio: 'ignore' },
    );
    const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
    await waitForCommandRunning(marker);
    expect(proxyDirectories(home, child.pid)).toHaveLength(1);
    child.kill('SIGTERM');
    expect(await closed).toBe(128 + 15);
    expect(proxyDirectories(home, child.pid)).toEqual([]);
  });
});

describe('ux mcp --allow-domain', () => {
  it('reaches a listed host and logs each connection to the client', async () => {
    const server = await httpServer();
    const home = networkHome({ config: 'approval_policy = "never"\n' });
    const { client, transport } = mcpClient(home, ['--allow-domain', 'allowed.test']);
    await client.connect(transport);
    onTestFinished(() => client.close());
    const serverPid = transport.pid ?? -1;
    const logged: { level: string; logger?: string; data: unknown }[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logged.push(notification.params);
    });
    const call = async (cmd: string) => {
      const result = await client.callTool({ name: 'exec_command', arguments: { cmd } });
      return (result.content as { text: string }[]).map((part) => part.text).join('');
    };
    expect(await call(`${CURL} ${server.url('allowed.test')}`)).toContain('hello from allowed.test');
    expect(await call(`${CURL} ${server.url('other.test')}`)).toContain(
      'ux: network access to "other.test" is not allowed by the sandbox\'s network policy (it is not in network.allow)',
    );
    const deadline = Date.now() + 5000;
    while (logged.length < 2 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(logged).toEqual([
      {
        level: 'info',
        logger: 'ux.network',
        data: expect.objectContaining({ type: 'network_access', host: 'allowed.test', decision: 'allowed' }),
      },
      {
        level: 'warning',
        logger: 'ux.network',
        data: expect.objectContaining({
          type: 'network_access',
          host: 'other.test',
          decision: 'denied',
        }),
      },
    ]);
    expect(proxyDirectories(home, serverPid)).toHaveLength(1);
    await client.close();
    const gone = Date.now() + 5000;
    while (proxyDirectories(home, serverPid).length > 0 && Date.now() < gone)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(proxyDirectories(home, serverPid)).toEqual([]);
  });

  it('refuses a call sent to a remote environment with the reason, and keeps serving local calls', async () => {
    const home = networkHome({
      config: `approval_policy = "never"\n[environments.dev]\ncommand = [${JSON.stringify(process.execPath)}, ${JSON.stringify(BIN)}, "exec-server", "--listen", "stdio"]\n`,
    });
    const client = await connectMcp(home, ['--allow-domain', 'allowed.test']);
    const remote = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'echo remote', environment_id: 'dev' },
    });
    expect(remote.isError).toBe(true);
    expect((remote.content as { text: string }[])[0]!.text).toContain(
      'network by domain (proxied) cannot be sent to an exec-server: the allow-list proxy runs on this machine',
    );
    const local = await client.callTool({ name: 'exec_command', arguments: { cmd: 'echo local' } });
    expect((local.content as { text: string }[])[0]!.text).toContain('local');
  });
});

describe('the requirements cap the network', () => {
  const REQUIREMENTS =
    '[network]\nallow = ["allowed.test", "*.corp.test"]\ndeny = ["secret.corp.test"]\nask_unknown = false\n';

  it('a flag cannot widen the pin: the error names the requirement and the flag', async () => {
    const home = networkHome({ requirements: REQUIREMENTS });
    const wider = await runUx(['sandbox', '--allow-domain', 'other.test', '--', 'true'], home);
    expect(wider.status).toBe(1);
    expect(wider.stderr).toBe(
      `ux: ${home.requirements}:2:1: network.allow entry "other.test" (from --allow-domain other.test) is not allowed here: no entry of network.allow = ["allowed.test", "*.corp.test"] covers it\n`,
    );
    const on = await runUx(['exec', '--network', '--', 'true'], home);
    expect(on.status).toBe(1);
    expect(on.stderr).toContain(
      `ux: ${home.requirements}:1:2: network "on" (from --network) is not allowed here`,
    );
  });

  it('config cannot widen it either; narrowing works, its deny list applies, and nothing is asked', async () => {
    const server = await httpServer();
    const wide = networkHome({
      requirements: REQUIREMENTS,
      config: '[sandbox_workspace_write]\nnetwork = "on"\n',
    });
    const refused = await runUx(['exec', '--', 'true'], wide);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toContain(
      `ux: ${wide.requirements}:1:2: network "on" (from ${wide.config}:2:1) is not allowed here: the network is allowed by domain only`,
    );
    const home = networkHome({ requirements: REQUIREMENTS, config: 'approval_policy = "on-request"\n' });
    const result = await runUx(
      [
        'exec',
        '--allow-domain',
        'allowed.test',
        '--allow-domain',
        '*.corp.test',
        '--',
        `${CURL} ${server.url('allowed.test')}; ${CURL} ${server.url('other.test')}; echo; ${CURL} ${server.url('secret.corp.test')}`,
      ],
      home,
    );
    expect(result.stdout).toContain('hello from allowed.test');
    // ask_unknown = false: refused by the lists, no question (there is no terminal to ask on anyway).
    expect(result.stdout).toContain(
      'ux: network access to "other.test" is not allowed by the sandbox\'s network policy (it is not in network.allow)',
    );
    // The requirements' deny list applies under the user's wildcard.
    expect(result.stdout).toContain(
      'ux: network access to "secret.corp.test" is not allowed by the sandbox\'s network policy (deny list',
    );
    expect(result.stderr).not.toContain('needs approval');
    expect(server.hosts).toEqual([`allowed.test:${server.port}`]);
  });
});

describe('ux doctor', () => {
  it('shows the network mode and where each part came from', async () => {
    const off = await runUx(['doctor'], networkHome());
    expect(off.stdout).toMatch(/ok {4}network +off \(default\)/);
    expect(off.stdout).toMatch(/ok {4}unix sockets +none allowed/);
    const home = networkHome({
      config:
        '[sandbox_workspace_write]\nnetwork = { allow = ["allowed.test"], deny = ["denied.test"] }\nallow_unix_sockets = ["~/agent.sock"]\n',
      requirements: '[network]\nallow = ["*.example.org", "allowed.test"]\nask_unknown = false\n',
    });
    const listed = await runUx(['doctor'], home);
    expect(listed.stdout).toContain(
      `by domain, through ux's allow-list proxy (${home.config}:2:1); allow allowed.test (${home.config}:2:22); deny denied.test (${home.config}:2:47); other hosts: denied without a question (${home.requirements}:3:1); requirements: by domain only, allow [*.example.org, allowed.test], no questions (${home.requirements}:1:2)`,
    );
    expect(listed.stdout).toMatch(
      new RegExp(
        `warn {2}unix sockets +allowed: ${home.home}/agent.sock \\(${home.config}:3:1\\); it does not exist`,
      ),
    );
    const json = JSON.parse(
      (await runUx(['doctor', '--json', '-c', 'sandbox_workspace_write.network="on"'], networkHome())).stdout,
    );
    expect(json.checks).toContainEqual({
      name: 'network',
      status: 'ok',
      detail: `on: the host's network (-c sandbox_workspace_write.network="on")`,
    });
  });

  it('says unknown hosts are denied when the approval policy asks nobody', async () => {
    const home = networkHome({
      config:
        'approval_policy = "never"\n[sandbox_workspace_write]\nnetwork = { allow = ["allowed.test"] }\n',
    });
    const result = await runUx(['doctor'], home);
    expect(result.stdout).toContain(
      `other hosts: denied without a question (approval policy never (${home.config}:1:1))`,
    );
  });

  it('fails the configuration when the requirements refuse it, naming both files', async () => {
    const home = networkHome({
      requirements: 'network = "off"\n',
      config: '[sandbox_workspace_write]\nnetwork = { allow = ["allowed.test"] }\n',
    });
    const result = await runUx(['doctor'], home);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain(
      `${home.requirements}:1:1: network by domain (from ${home.config}:2:1) is not allowed here: network = "off"`,
    );
  });
});

describe('usage', () => {
  it.each([
    [
      ['sandbox', '--no-network', '--allow-domain', 'a.org', '--', 'true'],
      'ux: --allow-domain a.org limits the network to listed hosts and --no-network takes it away; give one',
    ],
    [
      ['exec', '--allow-domain', 'https://a.org/', '--', 'true'],
      'ux: --allow-domain "https://a.org/" is a URL, not a host name; write "a.org"',
    ],
    [['mcp', '--network', '--allow-domain', 'a.org'], '--network gives all of it; give one'],
    [['sandbox', '--allow-unix-socket', '', '--', 'true'], 'ux: --allow-unix-socket needs a path'],
    [
      ['exec', '--sandbox', 'danger-full-access', '--allow-domain', 'a.org', '--', 'true'],
      'ux: --allow-domain a.org needs a sandbox',
    ],
  ])('%j is a usage error', async (args, message) => {
    const result = await runUx(args, networkHome());
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it('--env with --allow-domain is refused before anything connects', async () => {
    const home = networkHome({ config: '[environments.box]\ncommand = ["false"]\n' });
    const result = await runUx(['exec', '--env', 'box', '--allow-domain', 'a.org', '--', 'true'], home);
    expect(result.status).toBe(2);
    expect(result.stderr).toContain(
      'ux: network by domain (from --allow-domain a.org) cannot be used there: commands run in the remote environment "box"',
    );
  });

  it('every policy command documents the options', async () => {
    for (const command of ['exec', 'sandbox', 'mcp']) {
      const help = (await runUx([command, '--help'], networkHome())).stdout;
      expect(help).toContain('--allow-domain HOST');
      expect(help).toContain('--allow-unix-socket PATH');
    }
  });
});

describe('unix sockets', () => {
  it('a host unix socket is reachable only when allowed (--allow-unix-socket or allow_unix_sockets)', async () => {
    const home = networkHome({ config: 'approval_policy = "never"\n' });
    const path = join(home.home, 'agent.sock');
    const server = createNetServer((socket) => socket.end('agent says hi\n'));
    await new Promise<void>((resolve) => server.listen(path, resolve));
    onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const script = `require("net").connect(${JSON.stringify(path)}).on("data",d=>process.stdout.write(d)).on("error",e=>{console.log("refused "+e.code);process.exit(3)})`;
    const argv = [process.execPath, '-e', script];
    const refused = await runUx(['sandbox', '--', ...argv], home);
    expect(refused.stdout).toMatch(/refused E/);
    expect(refused.status).toBe(3);
    const allowed = await runUx(['sandbox', '--allow-unix-socket', path, '--', ...argv], home);
    expect(allowed.stdout).toBe('agent says hi\n');
    const configured = networkHome({
      config: `approval_policy = "never"\n[sandbox_workspace_write]\nallow_unix_sockets = [${JSON.stringify(path)}]\n`,
    });
    const viaExec = await runUx(['exec', '--', `${process.execPath} -e '${script}'`], configured);
    expect(viaExec.stdout).toContain('agent says hi');
  });
});
