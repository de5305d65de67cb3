// What a model connected through `ux mcp` is told about the session's policy (server instructions and
// exec_command's description), that it stays true as the session changes (tools/list_changed), the
// tools' annotations, and start-up failures answered in-band. Through the built CLI and the MCP SDK's
// own client.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type ElicitResult, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { useLeakCheck } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  BIN,
  makeHome,
  mcpClient,
  runUx,
  startUxInTerminal,
  type UxHome,
  warmUpTerminalSpawner,
} from './cli-harness.js';
import { McpWire } from './mcp-wire.js';
import { CURL, httpServer, networkHome } from './network-harness.js';

// The terminal test's host reaper starts before the leak check's baseline.
beforeAll(() => warmUpTerminalSpawner());
useLeakCheck();

interface Connect {
  args?: string[];
  /** Answers elicitation requests by their `decision` value; without it the client offers no elicitation. */
  elicit?: (message: string) => ElicitResult;
}

async function connect(home: UxHome, options: Connect = {}) {
  const { client, transport } = mcpClient(home, options.args, options.elicit);
  /** Resolves at each tools/list_changed notification; `changes` counts them. */
  let changes = 0;
  let signal: () => void = () => {};
  let next = new Promise<void>((resolve) => {
    signal = resolve;
  });
  client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
    changes += 1;
    signal();
    next = new Promise<void>((resolve) => {
      signal = resolve;
    });
  });
  await client.connect(transport);
  onTestFinished(() => client.close());
  const execTool = async () => {
    const { tools } = await client.listTools();
    return tools.find((tool) => tool.name === 'exec_command')!;
  };
  return {
    client,
    execTool,
    instructions: () => client.getInstructions() ?? '',
    listChanged: () => next,
    changeCount: () => changes,
  };
}

describe('ux mcp tells the model the policy', () => {
  it('default session, a client without elicitation (approvals_via = "client"): the same text in the instructions and the description', async () => {
    const home = makeHome({ config: 'approvals_via = "client"\n' });
    const { client, execTool, instructions } = await connect(home);
    const exec = await execTool();
    const policy = [
      'Sandbox rules for commands (ux):',
      `- Writable: the workspace ${home.workspace} and /tmp (this session’s own: not the host’s /tmp, removed when the session ends). Everything else is read-only, and so are .git config and hooks, .ux, .codex and .agents in the writable places, and shell start-up files in a writable home.`,
      '- Network: off. Connections and DNS fail, and listening on a port (even 127.0.0.1) is refused (EPERM): a server needs the network.',
      '- Approvals: nobody can be asked (this MCP client has no elicitation, so it cannot show approval questions): whatever needs approval is refused, require_escalated included, and so are force-deleting commands (rm -rf …). Work within these limits.',
    ].join('\n');
    expect(instructions()).toBe(
      `Run shell commands with exec_command; continue or poll running ones with write_stdin.\n\n${policy}`,
    );
    expect(exec.description).toMatch(/^Run a shell command\. Returns its output once it exits/);
    expect(exec.description?.endsWith(`\n\n${policy}`)).toBe(true);
    expect(client.getServerCapabilities()?.tools).toEqual({ listChanged: true });
  });

  it('a client with elicitation: the person is asked, and how to ask is said', async () => {
    const home = makeHome();
    const { execTool, instructions } = await connect(home, {
      elicit: () => ({ action: 'decline' }),
    });
    const asked =
      '- Approvals: force-deleting commands (rm -rf …) are put to the person first. If the sandbox blocks what the task needs, run the command again with sandbox_permissions "require_escalated" and a justification (one sentence for the person): the person may let it run outside the sandbox once, for the session, or, given prefix_rule (e.g. ["npm", "install"]), for all later commands with that prefix.';
    expect(instructions()).toContain(asked);
    expect((await execTool()).description).toContain(asked);
  });

  it('--sandbox read-only: nothing is writable', async () => {
    const home = makeHome();
    const { execTool, instructions } = await connect(home, { args: ['--sandbox', 'read-only'] });
    const line =
      '- Writable: nothing (sandbox mode read-only), not even /tmp: any write fails with "Read-only file system". Reading is allowed.';
    expect(instructions()).toContain(line);
    expect((await execTool()).description).toContain(line);
  });

  it('network by domain: the hosts, and a host allowed for the session is told at once (list_changed)', async () => {
    const server = await httpServer();
    const home = networkHome();
    const { client, execTool, listChanged, changeCount } = await connect(home, {
      args: ['--approval', 'on-request', '--allow-domain', 'allowed.test'],
      elicit: () => ({ action: 'accept', content: { decision: 'approve_for_session' } }),
    });
    const before = (await execTool()).description ?? '';
    expect(before).toContain(
      '- Network: only these hosts, through ux’s proxy (HTTP_PROXY/HTTPS_PROXY/ALL_PROXY are set; no DNS or UDP of your own): allowed.test. Another host is put to the person when a command connects (once, for the session, or no).',
    );
    expect(before).not.toContain('Also allowed for this session');
    const changed = listChanged();
    const result = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: `${CURL} ${server.url('other.test')}` },
    });
    expect(JSON.stringify(result.content)).toContain(`hello from other.test:${server.port}`);
    await changed;
    expect(changeCount()).toBe(1);
    expect((await execTool()).description).toContain(
      ': allowed.test. Also allowed for this session: other.test. Another host',
    );
  });

  it('a prefix approved with prefix_rule is told at once (list_changed), and only once', async () => {
    const home = makeHome();
    const { client, execTool, listChanged, changeCount } = await connect(home, {
      args: ['--approval', 'on-request'],
      elicit: () => ({ action: 'accept', content: { decision: 'approve_prefix' } }),
    });
    expect((await execTool()).description).not.toContain('Approved in this session');
    const changed = listChanged();
    const escalated = {
      name: 'exec_command',
      arguments: {
        cmd: 'echo outside',
        sandbox_permissions: 'require_escalated',
        justification: 'the test asks for it',
        prefix_rule: ['echo', 'outside'],
      },
    };
    const result = await client.callTool(escalated);
    expect(result.structuredContent).toMatchObject({ exit_code: 0, output: 'outside\n' });
    await changed;
    const after = (await execTool()).description ?? '';
    expect(after).toContain(
      '- Approved in this session, so run without a question: commands starting with `echo outside`.',
    );
    // The same prefix again changes nothing a model reads: no second notification before this list.
    await client.callTool({ name: 'exec_command', arguments: { cmd: 'echo outside' } });
    await execTool();
    expect(changeCount()).toBe(1);
  });

  it('a client that declines every question at once (codex exec), approvals_via = "client": the model is told nobody can be asked, once', async () => {
    const home = makeHome({ config: 'approvals_via = "client"\n' });
    const { client, execTool, listChanged, changeCount } = await connect(home, {
      args: ['--approval', 'on-request'],
      elicit: () => ({ action: 'decline' }),
    });
    expect((await execTool()).description).toContain('the person may let it run outside the sandbox');
    const changed = listChanged();
    const escalated = {
      name: 'exec_command',
      arguments: {
        cmd: 'touch /etc/ux-asked',
        sandbox_permissions: 'require_escalated',
        justification: 'test',
      },
    };
    const refused = await client.callTool(escalated);
    expect(refused.structuredContent).toMatchObject({ status: 'refused', refusal: { decided_by: 'client' } });
    await changed;
    const after = (await execTool()).description ?? '';
    expect(after).toMatch(
      /Approvals: nobody can be asked \(this MCP client answers approval questions itself: it said "decline" to one after \d+ ms/,
    );
    expect(after).not.toContain('the person may let it run outside the sandbox');
    // A denial no longer offers escalation either; a second automatic answer changes nothing more.
    const denied = await client.callTool({ name: 'exec_command', arguments: { cmd: 'touch /etc/ux-asked' } });
    expect(denied.structuredContent).toMatchObject({ denial: { kind: 'file_write' } });
    expect((denied.structuredContent as { next_step: string }).next_step).not.toContain('require_escalated');
    await client.callTool(escalated);
    await execTool();
    expect(changeCount()).toBe(1);
  });

  it('several environments: each is named, and a remote one opens the world', async () => {
    const home = makeHome({ config: '[environments.box]\nurl = "ws://127.0.0.1:9"\ncwd = "/srv/app"\n' });
    const { execTool, instructions } = await connect(home);
    const line =
      '- Environments (environment_id): local (this machine, the default), box (remote: a ux exec-server, starts in /srv/app). A remote one applies the same rules to its own files, its own /tmp and its own network.';
    expect(instructions()).toContain(line);
    const exec = await execTool();
    expect(exec.description).toContain(line);
    expect(exec.annotations?.openWorldHint).toBe(true);
  });

  it('annotates the tools honestly: nothing read-only, the open world only with a network', async () => {
    const home = makeHome();
    const off = await connect(home);
    const { tools } = await off.client.listTools();
    expect(tools.map((tool) => [tool.name, tool.title, tool.annotations])).toEqual([
      [
        'exec_command',
        'Run a shell command',
        {
          title: 'Run a shell command',
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: false,
          openWorldHint: false,
        },
      ],
      [
        'write_stdin',
        'Type into or poll a running command',
        {
          title: 'Type into or poll a running command',
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: false,
          openWorldHint: false,
        },
      ],
    ]);
    const on = await connect(makeHome(), { args: ['--network'] });
    const listed = (await on.client.listTools()).tools;
    expect(listed.map((tool) => tool.annotations?.openWorldHint)).toEqual([true, true]);
    const full = await connect(makeHome(), { args: ['--sandbox', 'danger-full-access'] });
    expect((await full.execTool()).annotations?.openWorldHint).toBe(true);
  });
});

describe('ux mcp before initialize', () => {
  it('answers Claude Code’s server/discover with -32601, then initializes with the instructions', async () => {
    const wire = McpWire.start(makeHome());
    wire.send({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} });
    expect((await wire.answer(1)).error?.code).toBe(-32601);
    wire.send(McpWire.initialize(2));
    const initialize = await wire.answer(2);
    expect(initialize.error).toBeUndefined();
    expect(String(initialize.result?.instructions)).toContain('Sandbox rules for commands (ux):');
  });
});

describe('ux mcp start-up failures are answered in-band', () => {
  it('--env nope: the client reads the problem and the fix; stderr says it; exit 2 when the input ends', async () => {
    const home = makeHome();
    const wire = McpWire.start(home, { args: ['--env', 'nope'] });
    wire.send(McpWire.initialize(1));
    wire.send({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    const [initialize, list] = [await wire.answer(1), await wire.answer(2)];
    for (const answer of [initialize, list])
      expect(answer.error).toEqual({
        code: -32603,
        message:
          "ux mcp cannot serve: unknown environment \"nope\"; environments: local. These arguments come from the MCP client's configuration of this server: correct them there ('ux mcp --help' lists the options)",
      });
    wire.end();
    expect(await wire.exited).toEqual({ code: 2, signal: null });
    expect(wire.stderr.join('')).toBe('ux: unknown environment "nope"; environments: local\n');
  });

  it('an unknown option is answered in-band too, with the usage hint on stderr', async () => {
    const home = makeHome();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--sandbox', 'workspace'],
      cwd: home.workspace,
      env: home.env,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'ux-test', version: '1.0.0' }, { capabilities: {} });
    const failure = await client.connect(transport).then(
      () => 'connected',
      (error: Error) => error.message,
    );
    await client.close();
    expect(failure).toContain(
      'ux mcp cannot serve: --sandbox must be one of read-only, workspace-write, danger-full-access, got "workspace"',
    );
    expect(failure).toContain("correct them there ('ux mcp --help' lists the options)");
  });

  it('a session that cannot start (a broken rule file) is told in the initialize answer and after; exit 1', async () => {
    const home = makeHome();
    mkdirSync(join(home.home, 'rules'));
    const rules = join(home.home, 'rules', 'bad.rules');
    writeFileSync(rules, 'prefix_rule(pattern = ["git"\n');
    const wire = McpWire.start(home);
    wire.send(McpWire.initialize(1));
    wire.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    wire.send(McpWire.call(2, 'exec_command', { cmd: 'touch ran' }));
    const [initialize, call] = [await wire.answer(1), await wire.answer(2)];
    for (const answer of [initialize, call])
      expect(answer.error).toEqual({
        code: -32603,
        message: `ux mcp cannot serve: the session could not start: ${rules}:2:1: expected "," or "]" in a list, found the end of the file`,
      });
    wire.end();
    expect(await wire.exited).toEqual({ code: 1, signal: null });
    expect(existsSync(join(home.workspace, 'ran'))).toBe(false);
  });

  it('a sandbox that cannot run is told in the initialize answer, with its fix; nothing runs', async () => {
    const home = makeHome({ config: 'bwrap_path = "/nonexistent/bwrap"\n' });
    const wire = McpWire.start(home);
    wire.send(McpWire.initialize(1));
    wire.send(McpWire.call(2, 'exec_command', { cmd: 'touch ran' }));
    const [initialize, call] = [await wire.answer(1), await wire.answer(2)];
    for (const answer of [initialize, call])
      expect(answer.error).toEqual({
        code: -32603,
        message:
          'ux mcp cannot serve: the session could not start: sandbox "bwrap" unavailable: [sandbox.bwrap] path /nonexistent/bwrap is not an executable file; set [sandbox.bwrap] path in config.toml to the absolute path of an installed bwrap (command -v bwrap), or remove it to use the one on PATH',
      });
    wire.end();
    expect(await wire.exited).toEqual({ code: 1, signal: null });
    expect(existsSync(join(home.workspace, 'ran'))).toBe(false);
  });

  it('without a sandbox to find (danger-full-access) the same configuration serves', async () => {
    const home = makeHome({ config: 'bwrap_path = "/nonexistent/bwrap"\n' });
    const { client } = await connect(home, { args: ['--sandbox', 'danger-full-access'] });
    const result = await client.callTool({ name: 'exec_command', arguments: { cmd: 'echo served' } });
    expect(result.structuredContent).toMatchObject({ exit_code: 0, output: 'served\n' });
  });

  it('typed at a terminal (no client: its input is the terminal) it prints the error and exits 2 at once', async () => {
    const ux = await startUxInTerminal(['mcp', '--env', 'nope'], makeHome());
    expect(await ux.exitCode()).toBe(2);
    expect(ux.screen).toContain('ux: unknown environment "nope"; environments: local');
  });

  it('with no client at all (input ends at once) it prints the usage error and exits 2', async () => {
    const result = await runUx(['mcp', '--env', 'nope'], makeHome());
    expect(result).toMatchObject({
      status: 2,
      stdout: '',
      stderr: 'ux: unknown environment "nope"; environments: local\n',
    });
  });
});
