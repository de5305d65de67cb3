// Remote environments when something is pinned or goes wrong, through what users run (`ux exec --env`,
// `ux mcp` under the MCP SDK client, `ux doctor`) against real `ux exec-server` processes (the built
// CLI): requirements that pin the environments, a server that cannot sandbox, a server that is down,
// a wrong token, and a server killed mid-session. Each failure must say why, and nothing may run
// anywhere (never locally instead).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { waitUntilDead } from '@ux/protocol-testing';
import { cuttableRelay, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import {
  BIN,
  connectMcp,
  expectNoneMatching,
  makeHome,
  mcpClient,
  runUx,
  type UxHome,
  uniqueMarker,
} from './cli-harness.js';
import { descendantsOf, freePort, startWsExecServer } from './exec-server-harness.js';

useLeakCheck();

/**
 * Says where the command ran: each server has WHERE in its environment, which commands inherit
 * there (a remote command sees the server's variables, not this machine's); this machine's ux has none.
 */
const WHERE_AM_I = `echo "where=\${WHERE:-here}"`;

const text = (result: unknown) =>
  ((result as { content: { text: string }[] }).content ?? []).map((part) => part.text).join('');

const isError = (result: unknown) => (result as { isError?: boolean }).isError === true;

async function execSchema(client: Client): Promise<{ properties: Record<string, unknown> }> {
  const { tools } = await client.listTools();
  return tools.find((tool) => tool.name === 'exec_command')!.inputSchema as {
    properties: Record<string, unknown>;
  };
}

/** `[environments.NAME]` for a stdio server started by `env VARS… node ux exec-server --listen stdio …`. */
function stdioEnvironment(name: string, vars: string[], extraArgs: string[] = []): string {
  const command = ['env', ...vars, process.execPath, BIN, 'exec-server', '--listen', 'stdio', ...extraArgs];
  return `[environments.${name}]\ncommand = ${JSON.stringify(command)}\n`;
}

function wsEnvironment(name: string, url: string): string {
  return `[environments.${name}]\nurl = "${url}"\ntoken_env = "BOX_TOKEN"\n`;
}

/** The exact first line ux prints when a remote environment cannot be reached under a sandbox mode. */
const unreachable = (command: string, reason: string) =>
  `Failed \`${command}\`: sandbox "exec-server" unavailable: ${reason}; check that the remote environment is reachable and runs \`ux exec-server\``;
const firstLine = (text: string) => text.split('\n')[0];

describe('requirements that pin the environments', () => {
  it('allowed_environments = ["box"] (defined there): commands run on box, local is refused, the tool has no environment_id', async () => {
    const server = await startWsExecServer({ env: { WHERE: 'box' } });
    const home = makeHome({
      requirements: `allowed_environments = ["box"]\n${wsEnvironment('box', server.url)}`,
    });
    home.env.BOX_TOKEN = server.token;
    const marker = join(home.home, 'MARKER');

    const byDefault = await runUx(['exec', '--', WHERE_AM_I], home);
    expect(byDefault.stderr).toBe('');
    expect(byDefault.status).toBe(0);
    expect(byDefault.stdout).toContain('\nwhere=box\n');

    const local = await runUx(['exec', '--env', 'local', '--', `touch ${marker}`], home);
    expect(local.status).toBe(1);
    expect(local.stdout).toBe('');
    expect(local.stderr).toBe(
      `ux: ${home.requirements}:1:1: environment "local" (from --env local) is not allowed here: allowed_environments = ["box"]\n`,
    );
    expect(existsSync(marker)).toBe(false);

    const client = await connectMcp(home);
    const schema = await execSchema(client);
    expect(Object.keys(schema.properties)).toContain('cmd');
    expect(Object.keys(schema.properties)).not.toContain('environment_id');
    const ran = await client.callTool({ name: 'exec_command', arguments: { cmd: WHERE_AM_I } });
    expect(isError(ran)).toBe(false);
    expect(text(ran)).toContain('Output:\nwhere=box\n');
    // With one environment there is nothing to choose: the argument is not part of the tool.
    const asked = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: `touch ${marker}`, environment_id: 'local' },
    });
    expect(isError(asked)).toBe(true);
    expect((asked.structuredContent as { error?: { message: string } }).error?.message).toBe(
      'invalid exec_command arguments: environment_id: unknown argument',
    );
    expect(existsSync(marker)).toBe(false);
  });

  it('local forbidden with two remotes: a default is required, then environment_id lists exactly the remotes', async () => {
    const server = await startWsExecServer({ env: { WHERE: 'box' } });
    // dev's server is another host in real life, with requirements of its own (none): this machine's
    // forbid local commands, so `ux exec-server` started under them would refuse to run any.
    const environments = `${wsEnvironment('box', server.url)}\n${stdioEnvironment('dev', ['WHERE=dev', 'UX_REQUIREMENTS=/nonexistent/requirements.toml'])}`;
    const requirements = 'allowed_environments = ["box", "dev"]\n';

    // Nobody chose among box and dev: ux refuses to guess, and says how to choose.
    const undecided = makeHome({ config: environments, requirements });
    undecided.env.BOX_TOKEN = server.token;
    const why = `${undecided.requirements}:1:1: allowed_environments = ["box", "dev"] forbids local commands and allows 2 environments (box, dev): set default_environment in ${undecided.config} to one of them, or choose one with --env`;
    const refused = await runUx(['exec', '--', WHERE_AM_I], undecided);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(`ux: ${why}\n`);
    const cannotServe = mcpClient(undecided);
    try {
      await expect(cannotServe.client.connect(cannotServe.transport)).rejects.toThrow(
        `MCP error -32603: ux mcp cannot serve: ${why}`,
      );
    } finally {
      await cannotServe.client.close();
    }

    // default_environment in the config chooses among them.
    const home = makeHome({ config: `default_environment = "dev"\n${environments}`, requirements });
    home.env.BOX_TOKEN = server.token;
    const client = await connectMcp(home);
    const schema = await execSchema(client);
    expect(schema.properties.environment_id).toEqual({
      type: 'string',
      enum: ['box', 'dev'],
      description: 'Which environment to run in: box or dev. Default: dev.',
    });
    const byDefault = await client.callTool({ name: 'exec_command', arguments: { cmd: WHERE_AM_I } });
    expect(text(byDefault)).toContain('Output:\nwhere=dev\n');
    const onBox = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: WHERE_AM_I, environment_id: 'box' },
    });
    expect(text(onBox)).toContain('Output:\nwhere=box\n');
    const marker = join(home.home, 'MARKER');
    const local = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: `touch ${marker}`, environment_id: 'local' },
    });
    expect(isError(local)).toBe(true);
    expect(local.structuredContent).toMatchObject({
      status: 'failed',
      error: {
        code: 'unknown_environment',
        message:
          'environment_id "local" is not available in this session (commands may not run on this machine); known environments: box, dev',
      },
    });
    expect(existsSync(marker)).toBe(false);
  });
});

describe('a server that applies no sandbox', () => {
  /** `bare`: a stdio server offering no sandbox backend ("," is an empty list); `tag` is on its command line. */
  function bareHome(tag: string, extra = ''): UxHome {
    return makeHome({
      config: `${extra}${stdioEnvironment('bare', ['WHERE=bare', `UX_TEST_TAG=${tag}`], ['--sandbox-backends', ','])}`,
    });
  }

  it('is refused under workspace-write before anything runs; danger-full-access runs there', async () => {
    const tag = uniqueMarker();
    const home = bareHome(tag);
    const command = `touch MARKER; touch ${home.home}/MARKER`;
    const refused = await runUx(['exec', '--env', 'bare', '--', command], home);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toBe('');
    expect(refused.stdout).toMatch(
      new RegExp(
        `^${escapeRegExp(`Failed \`${command}\`: sandbox "exec-server" unavailable: environment "bare": the exec-server (executor `)}[\\d.]+\\) does not advertise that it applies sandboxes; run \`ux exec-server\` on a remote host where a sandbox backend works \\(bubblewrap on Linux\\), or choose a policy without a sandbox\\nError: sandbox_unavailable\\n`,
      ),
    );
    // Not there, and not here instead: both would create one of these.
    expect(existsSync(join(home.workspace, 'MARKER'))).toBe(false);
    expect(existsSync(join(home.home, 'MARKER'))).toBe(false);
    // The server ux started for it has exited with ux.
    await expectNoneMatching(tag);

    // Without a sandbox mode that needs one, the same server runs the command (there, not here).
    const unsandboxed = await runUx(
      ['exec', '--env', 'bare', '--sandbox', 'danger-full-access', '--', `${WHERE_AM_I}; ${command}`],
      home,
    );
    expect(unsandboxed.stderr).toBe('');
    expect(unsandboxed.status).toBe(0);
    expect(unsandboxed.stdout).toContain('Output:\nwhere=bare\n');
    expect(existsSync(join(home.workspace, 'MARKER'))).toBe(true);
    await expectNoneMatching(tag);
  });

  it('ux doctor: reachable, but applies no sandbox, with the fix; fails when it is the default', async () => {
    const tag = uniqueMarker();
    const line = (status: string) =>
      new RegExp(
        `${status}\\s+environment bare\\s+reached through the command \`env WHERE=bare UX_TEST_TAG=${tag} ${escapeRegExp(process.execPath)} ${escapeRegExp(BIN)} exec-server --listen stdio --sandbox-backends ,\` \\(executor [\\d.]+, on linux, shell /bin/bash\\), but the server does not apply sandboxes, and the sandbox mode workspace-write needs one: commands there are refused\\n\\s+fix: run \`ux doctor\` on that host and fix its sandbox \\(bubblewrap on Linux\\), or use danger-full-access for this environment's sessions\\n`,
      );
    const other = await runUx(['doctor'], bareHome(tag));
    expect(other.stdout).toMatch(line('warn'));
    expect(other.stdout).toContain('ux can run here; see the warnings above.');
    expect(other.status).toBe(0);

    const byDefault = await runUx(['doctor'], bareHome(tag, 'default_environment = "bare"\n'));
    expect(byDefault.stdout).toMatch(/ok\s+environments\s+local, bare; commands run in bare unless/);
    expect(byDefault.stdout).toMatch(line('fail'));
    expect(byDefault.stdout).toContain('ux cannot run as configured here; see the fixes above.');
    expect(byDefault.status).toBe(1);

    const unsandboxed = await runUx(
      ['doctor', '-c', 'sandbox_mode="danger-full-access"'],
      bareHome(tag, 'default_environment = "bare"\n'),
    );
    expect(unsandboxed.stdout).toMatch(
      /ok\s+environment bare\s+reached through the command `[^`]+`: executor [\d.]+, on linux, shell \/bin\/bash; it applies no sandbox \(none is needed in this mode\)\n/,
    );
    expect(unsandboxed.status).toBe(0);
    await expectNoneMatching(tag);
  });
});

describe('a server that cannot be reached', () => {
  it('nothing listening on the port, or a stdio command that does not exist: the reason, and nothing runs', async () => {
    const port = await freePort();
    const home = makeHome({
      config: `${wsEnvironment('box', `ws://127.0.0.1:${port}`)}\n[environments.gone]\ncommand = ["/nonexistent/ux", "exec-server"]\n`,
    });
    home.env.BOX_TOKEN = 'any';
    const command = `touch MARKER; touch ${home.home}/MARKER`;
    const refusedConnection = `cannot reach environment "box": cannot connect to the exec-server at ws://127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`;
    const noCommand =
      'cannot reach environment "gone": cannot start the exec-server `/nonexistent/ux exec-server`: spawn /nonexistent/ux ENOENT';

    const box = await runUx(['exec', '--env', 'box', '--', command], home);
    expect(box.status).toBe(1);
    expect(firstLine(box.stdout)).toBe(unreachable(command, refusedConnection));
    const gone = await runUx(['exec', '--env', 'gone', '--', command], home);
    expect(gone.status).toBe(1);
    expect(firstLine(gone.stdout)).toBe(unreachable(command, noCommand));
    // No sandbox needed: still never run here instead.
    const unsandboxed = await runUx(
      ['exec', '--env', 'box', '--sandbox', 'danger-full-access', '--', command],
      home,
    );
    expect(unsandboxed.status).toBe(1);
    expect(firstLine(unsandboxed.stdout)).toBe(
      `Failed \`${command}\`: failed to start /bin/bash: ${refusedConnection}; the command was not run (ux never runs it locally instead)`,
    );
    expect(unsandboxed.stdout).toContain('\nError: spawn_failed\n');

    const client = await connectMcp(home, ['--env', 'box']);
    const viaMcp = await client.callTool({ name: 'exec_command', arguments: { cmd: command } });
    expect(isError(viaMcp)).toBe(true);
    expect(firstLine(text(viaMcp))).toBe(unreachable(command, refusedConnection));
    const viaMcpGone = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: command, environment_id: 'gone' },
    });
    expect(isError(viaMcpGone)).toBe(true);
    expect(firstLine(text(viaMcpGone))).toBe(unreachable(command, noCommand));

    expect(existsSync(join(home.workspace, 'MARKER'))).toBe(false);
    expect(existsSync(join(home.home, 'MARKER'))).toBe(false);
  });

  it('a wrong token: HTTP 401, nothing started on the server, which still serves the right token', async () => {
    const server = await startWsExecServer({ env: { WHERE: 'box' } });
    const home = makeHome({ config: wsEnvironment('box', server.url) });
    home.env.BOX_TOKEN = 'wrong';
    const command = `touch MARKER; touch ${home.home}/MARKER`;
    const result = await runUx(['exec', '--env', 'box', '--', command], home);
    expect(result.status).toBe(1);
    expect(firstLine(result.stdout)).toBe(
      unreachable(
        command,
        `cannot reach environment "box": the exec-server at ${server.url} answered HTTP 401: the server refused the capability token (check --ws-token-file / the token you pass)`,
      ),
    );
    expect(existsSync(join(home.workspace, 'MARKER'))).toBe(false);
    expect(existsSync(join(home.home, 'MARKER'))).toBe(false);
    // The server hosts no command: among its processes, only its own helpers (the host reaper, the
    // sandbox's path guard), if any.
    const hosted = descendantsOf(server.pid).filter((line) => !/ux-host-reaper|ux-path-guard/.test(line));
    expect(hosted).toEqual([]);

    home.env.BOX_TOKEN = server.token;
    const right = await runUx(['exec', '--env', 'box', '--', WHERE_AM_I], home);
    expect(right.status).toBe(0);
    expect(right.stdout).toContain('Output:\nwhere=box\n');
  });
});

describe('a WebSocket server killed mid-session', () => {
  it('ends the session with the reason, its process is gone, and a server back on the port is used again', async () => {
    const port = await freePort();
    const first = await startWsExecServer({
      port,
      env: { WHERE: 'box' },
      args: ['--on-disconnect', 'terminate'],
    });
    const home = makeHome({ config: wsEnvironment('box', first.url) });
    home.env.BOX_TOKEN = first.token;
    // danger-full-access: no pid namespace, so $$ is the shell's pid on this host.
    const client = await connectMcp(home, ['--env', 'box', '--sandbox', 'danger-full-access']);
    const tag = uniqueMarker();
    const started = text(
      await client.callTool({
        name: 'exec_command',
        arguments: { cmd: `echo "pid=$$"; sleep 300; : ${tag}`, yield_time_ms: 1000 },
      }),
    );
    const sessionId = Number(/Process running with session ID (\d+)/.exec(started)?.[1]);
    expect(sessionId).toBeGreaterThan(0);
    const shellPid = Number(/pid=(\d+)/.exec(started)?.[1]);
    expect(shellPid).toBeGreaterThan(1);
    expect(descendantsOf(first.pid).some((line) => line.startsWith(`${shellPid} `))).toBe(true);

    first.child.kill('SIGKILL');
    await first.closed;
    // A dropped WebSocket is retried for 10 s (its session resumed if the server is still there);
    // this server is gone, so the session ends when the window does.
    const polled = await client.callTool({
      name: 'write_stdin',
      arguments: { session_id: sessionId, yield_time_ms: 25_000 },
    });
    expect(text(polled)).toMatch(
      new RegExp(
        escapeRegExp(
          `[ux: environment "box" disconnected: the connection to the exec-server at ${first.url} closed (1006); it could not be resumed within 10.0 s: cannot reach environment "box": cannot connect to the exec-server at ${first.url}: connect ECONNREFUSED 127.0.0.1:${port}; what became of the process there is unknown]`,
        ),
      ),
    );
    expect(text(polled)).toContain('Process exited with code -1');
    expect(await waitUntilDead(shellPid, 5000)).toBe(true);
    await expectNoneMatching(tag);
    // The session is gone from the store.
    const again = await client.callTool({
      name: 'write_stdin',
      arguments: { session_id: sessionId, yield_time_ms: 250 },
    });
    expect(isError(again)).toBe(true);
    expect(text(again).split('\n')[0]).toBe(`write_stdin failed: Unknown process id ${sessionId}`);

    // While it is down, a call says so; once a server is back on the port, the next call reconnects.
    const down = await client.callTool({ name: 'exec_command', arguments: { cmd: WHERE_AM_I } });
    expect(isError(down)).toBe(true);
    expect(text(down)).toContain(
      `cannot reach environment "box": cannot connect to the exec-server at ${first.url}: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    const second = await startWsExecServer({ port, env: { WHERE: 'box-again' } });
    expect(second.url).toBe(first.url);
    const back = await client.callTool({ name: 'exec_command', arguments: { cmd: WHERE_AM_I } });
    expect(isError(back)).toBe(false);
    expect(text(back)).toContain('Output:\nwhere=box-again\n');
  });
});

describe('a dropped WebSocket connection', () => {
  it('is resumed: the session goes on, nothing it printed meanwhile is lost, and the receipt says so', async () => {
    const server = await startWsExecServer({ env: { WHERE: 'box' } });
    const relay = await cuttableRelay(server.port);
    const home = makeHome({ config: wsEnvironment('box', relay.url) });
    home.env.BOX_TOKEN = server.token;
    const client = await connectMcp(home, ['--env', 'box']);
    const started = text(
      await client.callTool({
        name: 'exec_command',
        arguments: {
          cmd: 'i=0; while [ $i -lt 40 ]; do i=$((i+1)); echo "line $i"; sleep 0.05; done; exit 3',
          yield_time_ms: 500,
        },
      }),
    );
    const sessionId = Number(/Process running with session ID (\d+)/.exec(started)?.[1]);
    expect(sessionId).toBeGreaterThan(0);
    relay.cut();
    let rest = '';
    for (let polls = 0; polls < 10 && !rest.includes('Process exited with code'); polls++) {
      rest += text(
        await client.callTool({
          name: 'write_stdin',
          arguments: { session_id: sessionId, yield_time_ms: 5000 },
        }),
      );
    }
    expect(rest).toContain('Process exited with code 3');
    expect(rest).toMatch(
      /\[ux: the connection to environment "box" was lost \(the connection to the exec-server at ws:\/\/127\.0\.0\.1:\d+ closed \(1006\)\) and resumed after \d+\.\d s\]/,
    );
    const lines = `${started}\n${rest}`.match(/^line \d+$/gm) ?? [];
    expect(lines).toEqual(Array.from({ length: 40 }, (_, index) => `line ${index + 1}`));
    // The resumed connection takes the next command.
    const next = await client.callTool({ name: 'exec_command', arguments: { cmd: WHERE_AM_I } });
    expect(text(next)).toContain('Output:\nwhere=box\n');
  });
});

describe('ux exec-server --keep-detached', () => {
  it('ends the processes of a client that does not come back', async () => {
    const server = await startWsExecServer({ args: ['--keep-detached', '1'] });
    const relay = await cuttableRelay(server.port);
    const home = makeHome({ config: wsEnvironment('box', relay.url) });
    home.env.BOX_TOKEN = server.token;
    // danger-full-access: no pid namespace, so $$ is the shell's pid on this host.
    const client = await connectMcp(home, ['--env', 'box', '--sandbox', 'danger-full-access']);
    const started = text(
      await client.callTool({
        name: 'exec_command',
        arguments: { cmd: 'echo "pid=$$"; exec sleep 300', yield_time_ms: 1000 },
      }),
    );
    const shellPid = Number(/pid=(\d+)/.exec(started)?.[1]);
    expect(shellPid).toBeGreaterThan(1);
    expect(descendantsOf(server.pid).some((line) => line.startsWith(`${shellPid} `))).toBe(true);
    // The client cannot reach the server any more: after 1 s detached, the server ends the process.
    await relay.down();
    expect(await waitUntilDead(shellPid, 10_000)).toBe(true);
    expect(server.child.exitCode).toBe(null);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
