// Waiting for input end to end: `ux mcp` (the built CLI, its real bubblewrap sandbox) driven by the MCP SDK's
// own client. A session blocked reading its terminal says so in the structured result
// (`waiting_for_input`, what Codex and Claude Code pass their models) and in the text (what Gemini
// passes), and an empty poll answers as soon as that is known instead of at its deadline.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { useLeakCheck } from '@ux/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { makeHome, mcpClient, runUx } from './cli-harness.js';

useLeakCheck();

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

interface Result {
  status: string;
  session_id?: number;
  waiting_for_input?: boolean;
  next_step?: string;
  output: string;
}

async function connect() {
  const home = makeHome();
  const { client, transport } = mcpClient(home, ['--sandbox', 'workspace-write', '--approval', 'never']);
  await client.connect(transport);
  open.push(client);
  const { tools } = await client.listTools();
  const validators = new Map(
    tools.map((tool) => [tool.name, new AjvJsonSchemaValidator().getValidator(tool.outputSchema as never)]),
  );
  const call = async (name: string, args: Record<string, unknown>) => {
    // The request timeout is the SDK's (60 s); a poll with a 5-minute deadline answers long before.
    const answer = await client.callTool({ name, arguments: args });
    const result = answer.structuredContent as unknown as Result;
    expect(validators.get(name)!(result).valid).toBe(true);
    const text = (answer.content as { type: string; text: string }[]).map((part) => part.text).join('');
    return { result, text };
  };
  return { call, tools };
}

describe.runIf(process.platform === 'linux')('ux mcp: waiting for input', () => {
  it('the output schema offers waiting_for_input', async () => {
    const { tools } = await connect();
    const schema = tools.find((tool) => tool.name === 'exec_command')!.outputSchema as {
      properties: Record<string, { type: string }>;
    };
    expect(schema.properties.waiting_for_input?.type).toBe('boolean');
  });

  it('a python3 -q REPL in the sandbox: waiting, in both forms; an empty long poll answers; typing works', async () => {
    const { call } = await connect();
    const started = await call('exec_command', { cmd: 'python3 -q', tty: true, yield_time_ms: 30_000 });
    expect(started.result).toMatchObject({ status: 'running', waiting_for_input: true });
    expect(started.result.output).toContain('>>> ');
    const id = started.result.session_id!;
    expect(started.text).toContain(`Process running with session ID ${id}\nProcess is waiting for input\n`);
    expect(started.text).toContain(`Next step: ${started.result.next_step}`);
    expect(started.result.next_step).toContain('waiting for input');

    // A 5-minute poll, inside the test's 30 s: it answers because the REPL waits, not at its deadline.
    const polled = await call('write_stdin', { session_id: id, chars: '', yield_time_ms: 300_000 });
    expect(polled.result).toMatchObject({ status: 'running', session_id: id, waiting_for_input: true });
    expect(polled.text).toContain('Process is waiting for input\n');

    const typed = await call('write_stdin', {
      session_id: id,
      chars: 'print(6*7)\n',
      yield_time_ms: 300_000,
    });
    expect(typed.result.output).toContain('42');
    expect(typed.result.waiting_for_input).toBe(true);
    await call('write_stdin', { session_id: id, chars: '\u0003' });
  });

  it('sleep 100 in the sandbox is running, not waiting, in both forms', async () => {
    const { call } = await connect();
    const started = await call('exec_command', {
      cmd: 'echo ready; sleep 100',
      tty: true,
      yield_time_ms: 1500,
    });
    expect(started.result.status).toBe('running');
    expect(started.result.output).toContain('ready');
    expect(started.result.waiting_for_input).toBeUndefined();
    expect(started.text).not.toContain('waiting for input');
    await call('write_stdin', { session_id: started.result.session_id!, chars: '\u0003' });
  });

  it('ux exec --tty without a terminal: a command waiting for input is said and ended, not polled forever', async () => {
    const result = await runUx(['exec', '--tty', '--', 'read -p "name? " x; echo "never $x"'], makeHome());
    expect(result.status).toBe(1);
    expect(result.stdout).toContain('Process is waiting for input\n');
    expect(result.stdout).toContain('name? ');
    expect(result.stdout).not.toContain('never');
    expect(result.stderr).toContain('waiting for input and nobody can type into it');
  });
});
