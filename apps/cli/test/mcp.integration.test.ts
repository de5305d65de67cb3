// `ux mcp` driven by the MCP SDK's own client over stdio, and by hand for malformed input.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema,
  ElicitRequestSchema,
  type ElicitResult,
} from '@modelcontextprotocol/sdk/types.js';
import { useLeakCheck } from '@ux/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { BIN, expectNoneMatching, makeHome, pidsMatching, type UxHome, uniqueMarker } from './cli-harness.js';

useLeakCheck();

// Denials here must count as sandbox denials even when a loaded machine makes `touch` slow to fail.
const NO_TMP =
  'early_exit_window_ms = 5000\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n';
const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

interface Connect {
  home?: UxHome;
  args?: string[];
  /** Answers elicitation requests; without it the client does not offer elicitation. */
  elicit?: (message: string) => ElicitResult | Promise<ElicitResult>;
}

async function connect(options: Connect = {}) {
  const home = options.home ?? makeHome();
  const stderr: string[] = [];
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', ...(options.args ?? [])],
    cwd: home.workspace,
    env: home.env,
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk) => stderr.push(String(chunk)));
  const client = new Client(
    { name: 'ux-test', version: '1.0.0' },
    { capabilities: options.elicit ? { elicitation: { form: {} } } : {} },
  );
  const asked: string[] = [];
  /** The titles of the answers each elicitation offered. */
  const offered: string[][] = [];
  if (options.elicit) {
    const answer = options.elicit;
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      const params = request.params as unknown as {
        message: string;
        requestedSchema: { properties: { decision: { oneOf: { title: string }[] } } };
      };
      asked.push(params.message);
      offered.push(params.requestedSchema.properties.decision.oneOf.map((choice) => choice.title));
      return answer(params.message);
    });
  }
  await client.connect(transport);
  open.push(client);
  return { client, home, asked, offered, stderr };
}

function text(result: unknown): string {
  return ((result as { content: unknown }).content as { type: string; text: string }[])
    .map((part) => part.text)
    .join('');
}

describe('ux mcp', () => {
  it('lists exactly exec_command and write_stdin with the protocol schemas', async () => {
    const { client } = await connect();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['exec_command', 'write_stdin']);
    const exec = tools[0]!;
    expect(exec.inputSchema).toMatchObject({
      type: 'object',
      required: ['cmd'],
      additionalProperties: false,
    });
    // One environment (this machine): no environment_id; no additional permissions by default.
    expect(Object.keys(exec.inputSchema.properties ?? {})).toEqual([
      'cmd',
      'workdir',
      'shell',
      'tty',
      'login',
      'yield_time_ms',
      'max_output_tokens',
      'sandbox_permissions',
      'justification',
      'prefix_rule',
    ]);
    expect(tools[1]!.inputSchema).toMatchObject({ required: ['session_id'], additionalProperties: false });
    expect(exec.outputSchema?.properties).toHaveProperty('chunk_id');
  });

  it('runs a command and returns the receipt and the structured result', async () => {
    const { client } = await connect();
    const result = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'echo from-mcp; exit 4' },
    });
    expect(result.isError).toBeFalsy();
    expect(text(result)).toMatch(
      /^Chunk ID: [0-9a-f]{6}\nWall time: [\d.]+ seconds\nProcess exited with code 4\n/,
    );
    expect(text(result)).toContain('Output:\nfrom-mcp\n');
    expect(result.structuredContent).toMatchObject({ exit_code: 4, output: 'from-mcp\n' });
  });

  it('polls a live session with write_stdin and writes to a terminal session', async () => {
    const { client } = await connect();
    const first = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'read line; echo "got $line"', tty: true, yield_time_ms: 300 },
    });
    const sessionId = (first.structuredContent as { session_id?: number }).session_id;
    expect(sessionId).toEqual(expect.any(Number));
    const poll = await client.callTool({
      name: 'write_stdin',
      arguments: { session_id: sessionId, yield_time_ms: 300 },
    });
    expect(text(poll)).toContain(`Process running with session ID ${sessionId}`);
    const answer = await client.callTool({
      name: 'write_stdin',
      arguments: { session_id: sessionId, chars: 'hello\n' },
    });
    expect(text(answer)).toContain('got hello');
    expect(answer.structuredContent).toMatchObject({ exit_code: 0 });
  });

  it('asks for approval by elicitation: approve runs the command', async () => {
    const { client, home, asked } = await connect({
      args: ['--approval', 'untrusted'],
      elicit: () => ({ action: 'accept', content: { decision: 'approve' } }),
    });
    const result = await client.callTool({ name: 'exec_command', arguments: { cmd: 'touch approved.txt' } });
    expect(result.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('command: touch approved.txt');
    expect(asked[0]).toContain(`in: ${home.workspace}`);
    expect(existsSync(join(home.workspace, 'approved.txt'))).toBe(true);
  });

  it('saves an approved prefix as a rule, and does not ask again for it', async () => {
    const schemas: unknown[] = [];
    const { client, home, asked } = await connect({
      args: ['--approval', 'untrusted'],
      elicit: () => ({ action: 'accept', content: { decision: 'approve_prefix' } }),
    });
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push((request.params as { message: string }).message);
      schemas.push((request.params as { requestedSchema: unknown }).requestedSchema);
      return { action: 'accept', content: { decision: 'approve_prefix' } };
    });
    const first = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'touch one.txt', prefix_rule: ['touch'] },
    });
    expect(first.isError).toBeFalsy();
    expect(JSON.stringify(schemas[0])).toContain('Always allow commands starting with: touch');
    expect(readFileSync(join(home.home, 'rules', 'default.rules'), 'utf8')).toContain(
      'prefix_rule(pattern=["touch"], decision="allow")',
    );
    const second = await client.callTool({ name: 'exec_command', arguments: { cmd: 'touch two.txt' } });
    expect(second.isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(existsSync(join(home.workspace, 'two.txt'))).toBe(true);
  });

  it('asks for approval by elicitation: decline and deny run nothing', async () => {
    const answers: ElicitResult[] = [
      { action: 'decline' },
      { action: 'accept', content: { decision: 'deny' } },
    ];
    // approvals_via = "client": the client's own decline is its answer (the default would ask the inbox).
    const { client, home } = await connect({
      args: ['--approval', 'untrusted', '-c', 'approvals_via="client"'],
      elicit: () => answers.shift()!,
    });
    for (const [name, decidedBy] of [
      ['declined.txt', 'client'],
      ['denied.txt', 'person'],
    ] as const) {
      const result = await client.callTool({ name: 'exec_command', arguments: { cmd: `touch ${name}` } });
      expect(result.isError).toBe(true);
      // A decline at once is the client's own answer (this test client answers before anyone could
      // read the question); a chosen "deny" is the person's.
      expect(result.structuredContent).toMatchObject({
        status: 'refused',
        command: `touch ${name}`,
        refusal: { decided_by: decidedBy },
      });
      expect(text(result)).toContain(
        decidedBy === 'person'
          ? 'rejected by the user'
          : 'the MCP client answered the approval question with "decline"',
      );
      expect(existsSync(join(home.workspace, name))).toBe(false);
    }
  });

  it('offers the unsandboxed retry after a denial by elicitation', async () => {
    const home = makeHome({ config: NO_TMP });
    const target = join(home.home, 'outside.txt');
    const { client, asked } = await connect({
      home,
      args: ['--approval', 'on-failure'],
      elicit: () => ({ action: 'accept', content: { decision: 'deny' } }),
    });
    const result = await client.callTool({ name: 'exec_command', arguments: { cmd: `touch ${target}` } });
    expect(asked[0]).toContain('ux: the sandbox blocked this command; run it again WITHOUT the sandbox?');
    expect(asked[0]).toContain('why: the sandbox blocked it (touch: cannot touch');
    expect(asked[0]).toContain('sandbox: approving runs it OUTSIDE the sandbox');
    expect(text(result)).toContain('rejected by the user');
    expect(existsSync(target)).toBe(false);
  });

  it('says when approving runs the command outside the sandbox, and why a dangerous one is asked', async () => {
    const { client, asked } = await connect({
      args: ['--approval', 'on-request'],
      elicit: () => ({ action: 'accept', content: { decision: 'deny' } }),
    });
    await client.callTool({
      name: 'exec_command',
      arguments: {
        cmd: 'touch escalated.txt',
        sandbox_permissions: 'require_escalated',
        justification: 'the model wants it',
      },
    });
    expect(asked[0]).toContain('command: touch escalated.txt');
    expect(asked[0]).toContain(
      'why: the model asked to run it outside the sandbox (sandbox_permissions "require_escalated")',
    );
    expect(asked[0]).toContain('model: the model wants it');
    expect(asked[0]).toContain('sandbox: approving runs it OUTSIDE the sandbox');
    await client.callTool({ name: 'exec_command', arguments: { cmd: 'rm -rf build' } });
    expect(asked[1]).toContain(
      'why: `rm -rf build` force-deletes files: ux asks even where the sandbox would hold',
    );
    expect(asked[1]).toContain('sandbox: approving runs it in the sandbox');
  });

  it("offers the model's prefix_rule as the rule, and says where it goes and what it bypasses", async () => {
    const home = makeHome({ config: NO_TMP });
    const target = join(home.home, 'outside.txt');
    const { client, asked, offered } = await connect({
      home,
      args: ['--approval', 'on-failure'],
      elicit: () => ({ action: 'accept', content: { decision: 'deny' } }),
    });
    const result = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: `touch ${target}`, prefix_rule: ['touch'] },
    });
    expect(text(result)).toContain('rejected by the user');
    expect(offered[0]).toContain('Always allow commands starting with: touch');
    expect(asked[0]).toContain(
      `saves prefix_rule(pattern=["touch"], decision="allow") to ${join(home.home, 'rules', 'default.rules')}; from then on every command starting with \`touch\` runs without asking, OUTSIDE the sandbox`,
    );
  });

  it('never offers a rule for a shell or an interpreter, which would allow anything', async () => {
    const { client, offered } = await connect({
      args: ['--approval', 'untrusted'],
      elicit: () => ({ action: 'accept', content: { decision: 'deny' } }),
    });
    for (const cmd of ['sh', 'python3', 'env', 'bash -i'])
      await client.callTool({ name: 'exec_command', arguments: { cmd, prefix_rule: [cmd.split(' ')[0]!] } });
    expect(offered).toHaveLength(4);
    for (const titles of offered) expect(titles.join('\n')).not.toContain('Always allow');
  });

  it('tells cancel ("aborted by the user") apart from decline ("rejected by the user")', async () => {
    const answers: ElicitResult[] = [{ action: 'cancel' }, { action: 'decline' }];
    // Answered as a person would: after reading the question (an instant answer is the client's own).
    const { client } = await connect({
      args: ['--approval', 'untrusted'],
      elicit: async () => {
        await new Promise((resolve) => setTimeout(resolve, 1_200));
        return answers.shift()!;
      },
    });
    const cancelled = await client.callTool({ name: 'exec_command', arguments: { cmd: 'touch a.txt' } });
    expect(text(cancelled)).toContain('aborted by the user');
    expect(cancelled.structuredContent).toMatchObject({
      status: 'refused',
      refusal: { decided_by: 'person' },
    });
    const declined = await client.callTool({ name: 'exec_command', arguments: { cmd: 'touch b.txt' } });
    expect(text(declined)).toContain('rejected by the user');
    expect(declined.structuredContent).toMatchObject({
      status: 'refused',
      refusal: { decided_by: 'person' },
    });
  });

  it('offers the user a prompt that ends every background session', async () => {
    const { client } = await connect();
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual([
      'clean_background_terminals',
    ]);
    const marker = uniqueMarker();
    const started = await client.callTool({
      name: 'exec_command',
      // The marker after the sleep: bash 5.2 execs a list's last command, which would drop the marker.
      arguments: { cmd: `sleep 300; : ${marker}`, yield_time_ms: 250 },
    });
    const sessionId = (started.structuredContent as { session_id?: number }).session_id;
    expect(sessionId).toEqual(expect.any(Number));
    expect(pidsMatching(marker).length).toBeGreaterThan(0);
    const cleaned = await client.getPrompt({ name: 'clean_background_terminals' });
    expect(cleaned.messages[0]!.content).toEqual({
      type: 'text',
      text: `ux ended every background session (session ${sessionId}) at the user's request; those session ids are no longer valid.`,
    });
    await expectNoneMatching(marker);
    const poll = await client.callTool({ name: 'write_stdin', arguments: { session_id: sessionId } });
    expect(text(poll)).toContain(`Unknown process id ${sessionId}`);
    expect((await client.getPrompt({ name: 'clean_background_terminals' })).messages[0]!.content).toEqual({
      type: 'text',
      text: 'ux: no background session was running.',
    });
    await expect(client.getPrompt({ name: 'clean' })).rejects.toThrow(
      'unknown prompt "clean"; the only one is clean_background_terminals',
    );
    await expect(
      client.getPrompt({ name: 'clean_background_terminals', arguments: { force: 'yes' } }),
    ).rejects.toThrow('clean_background_terminals takes no arguments, got "force"');
  });

  it('without elicitation and approvals_via = "client", refuses what needs approval and never escalates', async () => {
    const { client, home, stderr } = await connect({
      args: ['--approval', 'untrusted', '-c', 'approvals_via="client"'],
    });
    const result = await client.callTool({ name: 'exec_command', arguments: { cmd: 'touch unasked.txt' } });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain(
      'no one could be asked for approval (the MCP client does not support elicitation and approvals_via is "client";',
    );
    expect(existsSync(join(home.workspace, 'unasked.txt'))).toBe(false);
    expect(stderr.join('')).toContain('cannot answer elicitation requests');
  });

  it('a cancelled call stops waiting and keeps its process; closing the server ends it', async () => {
    const { client } = await connect();
    const marker = uniqueMarker();
    const controller = new AbortController();
    const call = client.callTool(
      // The marker after the sleep: bash 5.2 execs a list's last command, which would drop the marker.
      { name: 'exec_command', arguments: { cmd: `sleep 60; : ${marker}`, yield_time_ms: 30_000 } },
      CallToolResultSchema,
      { signal: controller.signal },
    );
    const deadline = Date.now() + 20_000;
    while (pidsMatching(marker).length === 0 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pidsMatching(marker).length).toBeGreaterThan(0);
    controller.abort();
    await expect(call).rejects.toThrow();
    // Instead of a pause: a later call, answered after the server has taken the cancellation (one
    // connection's messages are read in order). A kill the cancellation had set off would show by then.
    const later = await client.callTool(
      { name: 'exec_command', arguments: { cmd: 'echo later', login: false } },
      CallToolResultSchema,
    );
    expect(JSON.stringify(later.content)).toContain('later');
    expect(pidsMatching(marker).length).toBeGreaterThan(0);
    await client.close();
    await expectNoneMatching(marker);
  });

  it('reports progress while a long yield waits', async () => {
    const { client } = await connect();
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'exec_command', arguments: { cmd: 'sleep 2.5; echo late', yield_time_ms: 10_000 } },
      CallToolResultSchema,
      { onprogress: (update) => progress.push(update.progress) },
    );
    expect(text(result)).toContain('late');
    expect(progress.length).toBeGreaterThanOrEqual(2);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it('answers bad tool arguments with a clear tool error and runs nothing', async () => {
    const { client } = await connect();
    const bad = await client.callTool({
      name: 'exec_command',
      arguments: { cmd: 'true', yield_time_ms: 'soon' },
    });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain('invalid exec_command arguments: yield_time_ms');
    expect(bad.structuredContent).toMatchObject({
      status: 'failed',
      command: 'true',
      error: { code: 'invalid_arguments' },
    });
    const unknown = await client.callTool({ name: 'write_stdin', arguments: { session_id: 4242 } });
    expect(text(unknown).split('\n')[0]).toBe('write_stdin failed: Unknown process id 4242');
    expect(unknown).toMatchObject({
      isError: true,
      structuredContent: { status: 'failed', error: { code: 'unknown_session' } },
    });
    const other = await client.callTool({ name: 'shell', arguments: {} });
    expect(text(other)).toContain('unknown tool "shell"');
    expect(other.structuredContent).toMatchObject({ status: 'failed', error: { code: 'unknown_tool' } });
  });
});

describe('ux mcp: malformed messages on the wire', () => {
  it('answers garbage with a JSON-RPC error, unknown methods with "method not found", and keeps serving', async () => {
    const home = makeHome();
    const child = spawn(process.execPath, [BIN, 'mcp'], {
      cwd: home.workspace,
      env: home.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const lines: Record<string, unknown>[] = [];
    let buffer = '';
    child.stdout.on('data', (chunk) => {
      buffer += chunk;
      let newline = buffer.indexOf('\n');
      while (newline >= 0) {
        lines.push(JSON.parse(buffer.slice(0, newline)));
        buffer = buffer.slice(newline + 1);
        newline = buffer.indexOf('\n');
      }
    });
    const next = async (count: number) => {
      const deadline = Date.now() + 10_000;
      while (lines.length < count) {
        if (Date.now() > deadline) throw new Error(`no reply; got ${JSON.stringify(lines)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return lines[count - 1]!;
    };
    const send = (message: unknown) =>
      child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);

    send('{not json');
    expect(await next(1)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
    send({ jsonrpc: '2.0', id: 7 });
    // Not a request, a notification or a response: refused, and the answer keeps the id it did have.
    expect(await next(2)).toMatchObject({ id: 7, error: { code: -32600 } });
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    expect(await next(3)).toMatchObject({ id: 1, result: { serverInfo: { name: 'ux' } } });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    send({ jsonrpc: '2.0', id: 2, method: 'no/such/method' });
    expect(await next(4)).toMatchObject({ id: 2, error: { code: -32601 } });
    send({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'exec_command', arguments: 'echo' },
    });
    expect(await next(5)).toMatchObject({
      id: 3,
      error: {
        code: -32602,
        message: 'Invalid params: params.arguments: Invalid input: expected record, received string',
      },
    });
    send({
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/call',
      params: { name: 'exec_command', arguments: { cmd: 'echo still-here' } },
    });
    const reply = (await next(6)) as { result: { content: { text: string }[] } };
    expect(reply.result.content[0]!.text).toContain('still-here');
    child.stdin.end();
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
  });
});
