// The result contract end to end: what an MCP client gets from `ux mcp` (the built CLI) for each kind of result,
// the structured content (what Codex and Claude Code show their models) and the text (what Gemini
// shows) alike. The SDK client checks every structured result against the tool's outputSchema; the
// test checks it again with the SDK's own validator, so a result that does not conform fails here.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ElicitResult } from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { useLeakCheck } from '@ux/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { makeHome, mcpClient, type UxHome } from './cli-harness.js';

useLeakCheck();

// Denials must count as early ones even on a loaded machine; /tmp is not writable, so a write there
// (or anywhere outside the workspace) is the sandbox's to refuse.
const NO_TMP =
  'early_exit_window_ms = 5000\n[sandbox_workspace_write]\nexclude_slash_tmp = true\nexclude_tmpdir_env_var = true\n';

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

interface Result {
  result_version: number;
  status: string;
  command?: string;
  chunk_id?: string;
  wall_time_seconds: number;
  exit_code?: number;
  session_id?: number;
  sandbox_denied?: boolean;
  denial?: { kind: string; message: string };
  refusal?: { decided_by: string; reason: string };
  error?: { code: string; message: string };
  next_step?: string;
  output: string;
}

async function connect(options: { home?: UxHome; args?: string[]; elicit?: () => ElicitResult } = {}) {
  const home = options.home ?? makeHome({ config: NO_TMP });
  const { client, transport } = mcpClient(home, options.args, options.elicit);
  await client.connect(transport);
  open.push(client);
  // Listing the tools makes the SDK client check every structured result against its outputSchema.
  const { tools } = await client.listTools();
  const validators = new Map(
    tools.map((tool) => [tool.name, new AjvJsonSchemaValidator().getValidator(tool.outputSchema as never)]),
  );
  /** Calls a tool; returns its structured result (checked against the schema) and its text. */
  const call = async (name: string, args: Record<string, unknown>) => {
    const answer = await client.callTool({ name, arguments: args });
    const structured = answer.structuredContent as unknown as Result;
    expect(structured).toBeDefined();
    const check = validators.get(name)!(structured);
    expect(check.errorMessage).toBeUndefined();
    expect(check.valid).toBe(true);
    expect(structured.result_version).toBe(1);
    const text = (answer.content as { type: string; text: string }[]).map((part) => part.text).join('');
    // Both say the same: the wall time, and every line a model needs.
    expect(text).toContain(`Wall time: ${structured.wall_time_seconds.toFixed(4)} seconds`);
    if (structured.next_step) expect(text).toContain(`Next step: ${structured.next_step}`);
    return { result: structured, text, isError: answer.isError === true };
  };
  return { client, home, call };
}

describe('ux mcp results', () => {
  it('a success: exited, with the command as sent and its output', async () => {
    const { call } = await connect();
    const { result, text, isError } = await call('exec_command', { cmd: 'echo hi; exit 3' });
    expect(isError).toBe(false);
    expect(result).toMatchObject({
      status: 'exited',
      command: 'echo hi; exit 3',
      exit_code: 3,
      output: 'hi\n',
    });
    expect(result.chunk_id).toMatch(/^[0-9a-f]{6}$/);
    expect(text).toContain(`Chunk ID: ${result.chunk_id}\n`);
    expect(text).toContain('Process exited with code 3\n');
    expect(text).toMatch(/Output:\nhi\n$/);
  });

  it('wall time from the call start: sleep 0.6 reports at least 0.6 s', async () => {
    const { call } = await connect();
    const { result } = await call('exec_command', { cmd: 'sleep 0.6' });
    expect(result.status).toBe('exited');
    expect(result.wall_time_seconds).toBeGreaterThanOrEqual(0.6);
  });

  it('a running session, a poll and a stop: the next step says how, in both', async () => {
    // The default early-exit window: a command that runs on is reported running at its yield time.
    const { call } = await connect({ home: makeHome() });
    // sleep does not read its terminal: the poll after the write waits its whole yield (a `cat` would
    // wait for input, and the poll answer as soon as that is known: waiting-for-input.integration.test.ts).
    const started = await call('exec_command', { cmd: 'sleep 30', tty: true, yield_time_ms: 500 });
    expect(started.result).toMatchObject({ status: 'running', command: 'sleep 30' });
    const id = started.result.session_id!;
    expect(started.text).toContain(`Process running with session ID ${id}\n`);
    expect(started.result.next_step).toContain(`write_stdin with session_id ${id}`);
    expect(started.result.next_step).toContain('"\\u0003"');
    const polled = await call('write_stdin', { session_id: id, chars: 'hello\n', yield_time_ms: 300 });
    expect(polled.result).toMatchObject({ status: 'running', session_id: id });
    expect(polled.result.output).toContain('hello');
    expect(polled.result.command).toBeUndefined();
    // The write's settling time (100 ms) and the wait (300 ms) are inside the call.
    expect(polled.result.wall_time_seconds).toBeGreaterThanOrEqual(0.4);
    const stopped = await call('write_stdin', { session_id: id, chars: '\u0003', yield_time_ms: 2000 });
    expect(stopped.result.status).toBe('exited');
    expect(stopped.text).toContain(`Process exited with code ${stopped.result.exit_code}\n`);
    expect(stopped.result.next_step).toBeUndefined();
  });

  it('an early sandbox denial: named, with what to do next, in both', async () => {
    const { call, home } = await connect({ args: ['--approval', 'never', '--sandbox', 'workspace-write'] });
    const target = join(home.home, 'outside.txt');
    const { result, text, isError } = await call('exec_command', { cmd: `touch ${target}` });
    expect(isError).toBe(false);
    expect(result).toMatchObject({ status: 'exited', command: `touch ${target}`, sandbox_denied: true });
    expect(result.exit_code).not.toBe(0);
    expect(result.denial?.kind).toBe('file_write');
    expect(text).toContain(`Sandbox denied: ${result.denial!.message}\n`);
    expect(result.wall_time_seconds).toBeGreaterThan(0);
    expect(existsSync(target)).toBe(false);
  });

  it('a refusal without elicitation (approvals_via = "client"): nobody could be asked, the command as the model sent it', async () => {
    const { call, home } = await connect({
      args: ['--approval', 'untrusted', '-c', 'approvals_via="client"'],
    });
    const { result, text, isError } = await call('exec_command', { cmd: 'touch made.txt' });
    expect(isError).toBe(true);
    expect(result).toMatchObject({
      status: 'refused',
      command: 'touch made.txt',
      refusal: { decided_by: 'nobody' },
    });
    expect(result.refusal!.reason).toContain('does not support elicitation');
    expect(text.split('\n')[0]).toBe(`Not run \`touch made.txt\`: ${result.refusal!.reason}`);
    expect(text).toContain('\nRefused by: nobody could be asked (nobody)\n');
    expect(text).not.toContain('/bin/bash');
    expect(result.next_step).toBeTruthy();
    expect(existsSync(join(home.workspace, 'made.txt'))).toBe(false);
  });

  it("a refusal by elicitation declined at once: the client's automatic answer", async () => {
    const { call, home } = await connect({
      args: ['--approval', 'untrusted', '-c', 'approvals_via="client"'],
      elicit: () => ({ action: 'decline' }),
    });
    const { result, text, isError } = await call('exec_command', { cmd: 'touch made.txt' });
    expect(isError).toBe(true);
    expect(result).toMatchObject({
      status: 'refused',
      command: 'touch made.txt',
      refusal: { decided_by: 'client' },
    });
    expect(text).toContain("Refused by: the MCP client's automatic answer (client)");
    expect(existsSync(join(home.workspace, 'made.txt'))).toBe(false);
  });

  it('an invalid argument and an unknown session: failed, with a code', async () => {
    const { call } = await connect();
    const bad = await call('exec_command', { cmd: 'true', yield_time_ms: 'soon' });
    expect(bad.isError).toBe(true);
    expect(bad.result).toMatchObject({
      status: 'failed',
      command: 'true',
      error: { code: 'invalid_arguments' },
    });
    expect(bad.text).toContain('\nError: invalid_arguments\n');
    const unknown = await call('write_stdin', { session_id: 4242 });
    expect(unknown.result).toMatchObject({ status: 'failed', error: { code: 'unknown_session' } });
  });

  it('apply_patch: exit code 0 with a chunk id when it applies, 1 when it does not', async () => {
    const { call, home } = await connect();
    writeFileSync(join(home.workspace, 'a.txt'), 'one\n');
    const good =
      "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** End Patch\nEOF\n";
    const applied = await call('exec_command', { cmd: good });
    expect(applied.isError).toBe(false);
    expect(applied.result).toMatchObject({ status: 'exited', exit_code: 0, command: good });
    expect(applied.result.chunk_id).toMatch(/^[0-9a-f]{6}$/);
    expect(applied.result.output).toContain('Success. Updated the following files:\nM a.txt');
    expect(applied.text).toContain('Process exited with code 0\n');
    expect(readFileSync(join(home.workspace, 'a.txt'), 'utf8')).toBe('ONE\n');
    const bad =
      "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+three\n*** End Patch\nEOF\n";
    const failed = await call('exec_command', { cmd: bad });
    expect(failed.isError).toBe(true);
    expect(failed.result).toMatchObject({ status: 'exited', exit_code: 1, command: bad });
    expect(failed.text).toContain('Process exited with code 1\n');
    expect(readFileSync(join(home.workspace, 'a.txt'), 'utf8')).toBe('ONE\n');
  });
});
