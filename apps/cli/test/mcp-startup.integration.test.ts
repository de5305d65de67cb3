// What `ux mcp` checks before it serves, and what a client sees when the configuration keeps it from
// serving; `ux exec` follows the same tool plan.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { BIN, makeHome, mcpClient, runUx, type UxHome } from './cli-harness.js';
import { McpWire } from './mcp-wire.js';

useLeakCheck();

/** What the MCP SDK's own client gets from `client.connect` to `ux mcp ARGS…`: the error it throws. */
async function connectError(home: UxHome, args: string[] = []): Promise<string> {
  const { client, transport } = mcpClient(home, args);
  try {
    await client.connect(transport);
  } catch (error) {
    return (error as Error).message;
  } finally {
    await client.close();
  }
  throw new Error('ux mcp accepted the connection');
}

describe('ux mcp start-up', () => {
  it('refuses a --cwd that does not exist at once, as ux exec does', async () => {
    const result = await runUx(['mcp', '--cwd', '/nonexistent/dir'], makeHome());
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(
      "ux: --cwd /nonexistent/dir: no such directory\nRun 'ux mcp --help' for usage.\n",
    );
    expect(result.stdout).toBe('');
  });

  it('tells the client about a broken config.toml, with file:line:column', async () => {
    const home = makeHome({ config: 'approval_policy = "never"\nsandbox_mode = "workspace"\n' });
    const message = await connectError(home);
    expect(message).toContain(
      `ux mcp cannot serve: ${home.config}:2:1: sandbox_mode must be one of read-only, workspace-write, danger-full-access, external-sandbox, got "workspace" (did you mean "workspace-write"?)`,
    );
  });

  it('answers every request with the error, says it on stderr and exits 1 when the input ends', async () => {
    const home = makeHome({ config: '[features]\nunified_exec = maybe\n' });
    const wire = McpWire.start(home);
    wire.send(McpWire.initialize(1));
    wire.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    wire.send(McpWire.call(2, 'exec_command', { cmd: 'touch ran' }));
    const [initialize, call] = [await wire.answer(1), await wire.answer(2)];
    for (const answer of [initialize, call]) {
      expect(answer.error?.code).toBe(-32603);
      expect(answer.error?.message).toMatch(
        new RegExp(`^ux mcp cannot serve: ${home.config.replace(/[.]/g, '\\.')}:2:16: invalid TOML`),
      );
    }
    wire.end();
    expect(await wire.exited).toEqual({ code: 1, signal: null });
    expect(wire.stderr.join('')).toContain(`ux mcp cannot serve: ${home.config}:2:16: invalid TOML`);
    expect(wire.messages).toHaveLength(2);
    expect(existsSync(join(home.workspace, 'ran'))).toBe(false);
  });

  it('tells the client a deny_read that the configured mode cannot enforce', async () => {
    const home = makeHome({ config: 'sandbox_mode = "danger-full-access"\ndeny_read = ["~/.ssh"]\n' });
    expect(await connectError(home)).toContain(
      `${home.config}:2:1: deny_read needs a sandbox to hide "~/.ssh"`,
    );
  });
});

describe('[features] shell_tool and unified_exec', () => {
  it('ux mcp says which flag leaves the shell tool out, and where it is set', async () => {
    const home = makeHome({ config: '[features]\nshell_tool = false\n' });
    expect(await connectError(home)).toContain(
      `ux mcp cannot serve: exec_command and write_stdin are not offered: the shell tool is disabled by features.shell_tool = false in ${home.config}:2:1; set it to true`,
    );
  });

  it('without unified exec the plan offers shell_command: ux mcp serves it, ux exec runs through it', async () => {
    const home = makeHome({ config: '[features]\n\nunified_exec = false\n' });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp'],
      cwd: home.workspace,
      env: home.env,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'ux-test', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    try {
      expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['shell_command']);
      const result = await client.callTool({
        name: 'shell_command',
        arguments: { command: 'echo one-shot' },
      });
      expect(JSON.stringify(result.content)).toContain('one-shot');
    } finally {
      await client.close();
    }
    const exec = await runUx(['exec', '--', 'echo through-shell-command'], home);
    expect(exec.status).toBe(0);
    expect(exec.stdout).toMatch(
      /^Exit code: 0\nWall time: [\d.]+ seconds\nSandbox level: bwrap \(.*\)\nOutput:\nthrough-shell-command\n/,
    );
  });

  it('ux mcp names a -c override or a managed pin as the place to change', async () => {
    expect(await connectError(makeHome(), ['-c', 'features.shell_tool=false'])).toContain(
      'the shell tool is disabled by features.shell_tool = false in -c features.shell_tool=false; set it to true',
    );
    const home = makeHome({ requirements: '[features]\nshell_tool = false\n' });
    expect(await connectError(home)).toContain(
      `the shell tool is disabled by features.shell_tool = false in ${home.requirements}:2:1; the managed requirements pin it, and only they can change it`,
    );
  });

  it('ux exec follows the tool plan: nothing runs without the shell tool', async () => {
    const home = makeHome({ config: '[features]\nshell_tool = false\n' });
    const result = await runUx(['exec', '--', 'touch ran'], home);
    expect(result.status).toBe(1);
    expect(result.stderr).toBe(
      `ux: exec_command is not offered: the shell tool is disabled by features.shell_tool = false in ${home.config}:2:1; set it to true\n`,
    );
    expect(existsSync(join(home.workspace, 'ran'))).toBe(false);
  });
});
