// The real Codex CLI 0.169.0 (`codex exec`) with `ux mcp` as its MCP server, driven by a scripted model
// behind a Responses API on 127.0.0.1. Each tool call the script makes goes through Codex to ux; the test
// reads the next request's `function_call_output`: exactly what Codex passes to its model (the MCP
// result's structuredContent as JSON, not ux's text). One `codex exec` run carries every scenario, in
// order: a success, a running session polled and stopped with Ctrl-C, a sandbox denial, a refused
// listen, and an escalation that `codex exec` declines.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertCodexInstalled,
  type CodexExecResult,
  codexConfig,
  processesMentioning,
  runCodexExec,
} from './codex-exec.js';
import {
  type ModelReceived,
  type ResponsesRequest,
  readModelReceived,
  type ScriptedResponsesServer,
  startScriptedResponses,
  type ToolCall,
  toolOutputIn,
} from './scripted-responses.js';

const here = dirname(fileURLToPath(import.meta.url));
const UX = join(here, '../../apps/cli/dist/ux.cjs');

assertCodexInstalled();
if (!existsSync(UX)) throw new Error(`the ux CLI is not built: run \`pnpm build\` first (expected ${UX})`);

// Outside /tmp, as a person's home is: commands get a private /tmp of their session.
const parent = existsSync('/var/tmp') ? '/var/tmp' : tmpdir();
const root = realpathSync(mkdtempSync(join(parent, 'ux-interop-codex-mcp-')));
const workspace = join(root, 'workspace');
const codexHome = join(root, 'codex-home');
const uxHome = join(root, 'ux-home');
/** In the loop's command line, so a leaked loop can be found. */
const marker = `ux-interop-${root.slice(-6)}`;

const NAMESPACE = 'mcp__ux';
const ECHO = 'echo hi';
const LOOP = `i=0; while [ $i -lt 600 ]; do i=$((i+1)); echo "tick $i"; sleep 0.1; done # ${marker}`;
const TOUCH = 'touch /etc/ux-x';
const LISTEN = `node -e "require('net').createServer().listen(0, '127.0.0.1', () => console.log('listening'))"`;
/** Outside the workspace, so the sandbox would refuse it too; only an approval could make it. */
const ESCALATED_FILE = join(root, 'escalated');
const ESCALATE = `echo "outside the sandbox" > '${ESCALATED_FILE}'`;
const JUSTIFICATION = 'Write a file outside the workspace for the interop test.';

/** The scripted model's calls, in order; a call may read what earlier calls returned. */
interface Step {
  callId: string;
  call: (received: Map<string, ModelReceived>) => Omit<ToolCall, 'callId'>;
}

const ux = (name: string, args: Record<string, unknown>) => ({ namespace: NAMESPACE, name, arguments: args });
const sessionOf = (received: Map<string, ModelReceived>) => {
  const id = received.get('loop')?.structured?.session_id;
  if (typeof id !== 'number') throw new Error('the loop came back without a session_id to poll');
  return id;
};

const steps: Step[] = [
  { callId: 'echo', call: () => ux('exec_command', { cmd: ECHO }) },
  { callId: 'loop', call: () => ux('exec_command', { cmd: LOOP, tty: true, yield_time_ms: 500 }) },
  {
    callId: 'poll',
    call: (received) => ux('write_stdin', { session_id: sessionOf(received), chars: '', yield_time_ms: 250 }),
  },
  {
    callId: 'stop',
    call: (received) =>
      ux('write_stdin', { session_id: sessionOf(received), chars: '\u0003', yield_time_ms: 2_000 }),
  },
  { callId: 'touch', call: () => ux('exec_command', { cmd: TOUCH }) },
  { callId: 'listen', call: () => ux('exec_command', { cmd: LISTEN }) },
  {
    callId: 'escalate',
    call: () =>
      ux('exec_command', {
        cmd: ESCALATE,
        sandbox_permissions: 'require_escalated',
        justification: JUSTIFICATION,
      }),
  },
];

/** What the model read for each call, by call id; filled as the run goes. */
const received = new Map<string, ModelReceived>();
let server: ScriptedResponsesServer;
let run: CodexExecResult;
/** Processes of this run still alive once `codex exec` returned (Codex, ux mcp, the loop). */
let leftBehind: string[] = [];

/**
 * The model: at request N it reads the output of call N-1 (Codex sends the whole history each time),
 * then makes call N; after the last, it says it is done, and Codex ends the run.
 */
function respond(request: ResponsesRequest) {
  const index = server.requests.length - 1;
  const previous = steps[index - 1];
  if (previous) {
    const output = toolOutputIn(request, previous.callId);
    if (!output)
      throw new Error(`request ${index + 1} carries no function_call_output for ${previous.callId}`);
    received.set(previous.callId, readModelReceived(output.output));
  }
  const step = steps[index];
  if (!step) return { message: 'Done.' };
  return { calls: [{ callId: step.callId, ...step.call(received) }] };
}

beforeAll(async () => {
  mkdirSync(workspace);
  mkdirSync(codexHome);
  mkdirSync(uxHome);
  // What the model reads when the client's own answer stands: under the default (client-then-inbox)
  // codex exec's instant decline would hand the question to the approvals inbox, where it waits for a
  // person (apps/cli's approvals-inbox tests cover that path).
  writeFileSync(join(uxHome, 'config.toml'), 'approvals_via = "client"\n');
  server = await startScriptedResponses(respond);
  const path = [dirname(process.execPath), '/usr/local/bin', '/usr/bin', '/bin'].join(':');
  writeFileSync(
    join(codexHome, 'config.toml'),
    codexConfig({
      baseUrl: server.baseUrl,
      mcpServers: [
        {
          name: 'ux',
          command: process.execPath,
          args: [UX, 'mcp', '--cwd', workspace],
          cwd: workspace,
          env: {
            PATH: path,
            HOME: uxHome,
            UX_HOME: uxHome,
            UX_REQUIREMENTS: join(uxHome, 'requirements.toml'),
          },
        },
      ],
    }),
  );
  run = await runCodexExec({
    codexHome,
    home: root,
    cwd: workspace,
    path,
    prompt: 'Run the interop scenarios.',
    timeoutMs: 60_000,
  });
  leftBehind = await processesMentioning([root, marker], 3_000);
}, 90_000);

afterAll(async () => {
  // Whatever the run left (the leak test above names it) is ended here, by pid.
  for (const line of await processesMentioning([root, marker], 0)) {
    try {
      process.kill(Number(line.split(' ')[0]), 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
  // For a person reading a failure: every request Codex sent, tools and tool outputs included.
  const dump = process.env.UX_INTEROP_DUMP;
  if (dump && server) writeFileSync(dump, `${JSON.stringify(server.requests, null, 2)}\n`);
  await server?.close();
  rmSync(root, { recursive: true, force: true });
});

/** What the model read for `callId`, as the JSON Codex passed on (ux's structuredContent). */
function structured(callId: string): Record<string, unknown> {
  const got = received.get(callId);
  if (!got) throw new Error(`the model never read the result of ${callId}:\n${diagnostics()}`);
  if (!got.structured)
    throw new Error(`the model read no structured result for ${callId}, but: ${JSON.stringify(got.raw)}`);
  return got.structured;
}

function diagnostics(): string {
  return [
    `codex exec: status ${run.status}, signal ${run.signal}${run.timedOut ? ', killed at the deadline' : ''}`,
    `requests: ${server.requests.length}`,
    ...server.problems.map((problem) => `problem: ${problem}`),
    `stderr:\n${run.stderr.slice(-4_000)}`,
  ].join('\n');
}

// Each scenario checks every field (expect.soft), so one run names everything that differs.
describe('codex exec 0.169.0 → ux mcp, what the model receives', () => {
  it('runs the whole script, ends cleanly and leaves no process behind', () => {
    expect(server.problems, diagnostics()).toEqual([]);
    expect(run.timedOut, diagnostics()).toBe(false);
    expect(run.status, diagnostics()).toBe(0);
    expect(server.requests).toHaveLength(steps.length + 1);
    expect(run.events.at(-1)?.type).toBe('turn.completed');
    expect(leftBehind).toEqual([]);
  });

  it('offers ux’s tools as the namespace mcp__ux, and says what the sandbox allows', () => {
    const namespace = server.requests[0]!.tools.find((tool) => tool.name === NAMESPACE) as
      | { type: string; description?: string; tools: { name: string; description?: string }[] }
      | undefined;
    expect.soft(namespace?.type).toBe('namespace');
    expect.soft(namespace!.tools.map((tool) => tool.name).sort()).toEqual(['exec_command', 'write_stdin']);
    // Codex shows the model both the server's instructions (as the namespace's description) and each
    // tool's description; the sandbox's rules must be in what it reads before its first call.
    const exec = namespace!.tools.find((tool) => tool.name === 'exec_command')!;
    const read = `${namespace!.description ?? ''}\n${exec.description ?? ''}`;
    expect.soft(read).toContain('Network: off');
    expect.soft(read).toContain(workspace);
    expect.soft(read).toContain('require_escalated');
  });

  it('a success: echo hi', () => {
    const result = structured('echo');
    expect.soft(result).toMatchObject({
      result_version: 1,
      status: 'exited',
      command: ECHO,
      exit_code: 0,
      output: 'hi\n',
    });
    expect.soft(result.session_id).toBeUndefined();
    expect.soft(result.sandbox_denied).not.toBe(true);
    expect.soft(result.chunk_id).toMatch(/^[0-9a-f]{6}$/);
    expect.soft(typeof result.wall_time_seconds).toBe('number');
  });

  it('a running session: polled, then stopped with Ctrl-C', () => {
    const started = structured('loop');
    expect.soft(started).toMatchObject({ result_version: 1, status: 'running', command: LOOP });
    expect.soft(started.session_id).toEqual(expect.any(Number));
    expect.soft(started.exit_code).toBeUndefined();
    expect.soft(started.next_step).toEqual(expect.stringContaining('write_stdin'));

    const polled = structured('poll');
    expect
      .soft(polled)
      .toMatchObject({ result_version: 1, status: 'running', session_id: started.session_id });
    expect.soft(polled.command).toBeUndefined();
    // Only what came since the last read: the ticks go on from where the first result ended (however
    // many the first wait saw, none included), and none is repeated.
    const ticks = (output: unknown) =>
      [...String(output).matchAll(/^tick (\d+)\r?$/gm)].map((m) => Number(m[1]));
    const before = ticks(started.output);
    const after = ticks(polled.output);
    expect.soft(after[0]).toBe(before.length + 1);
    expect.soft(before).toEqual(before.map((_, i) => i + 1));
    expect.soft(after).toEqual(after.map((_, i) => before.length + 1 + i));

    const stopped = structured('stop');
    expect.soft(stopped).toMatchObject({ result_version: 1, status: 'exited' });
    expect.soft(stopped.session_id).toBeUndefined();
    // The shell in the terminal died of SIGINT: 128 + 2.
    expect.soft(stopped.exit_code).toBe(130);
  });

  it('a sandbox denial: touch /etc/ux-x is named a file write to /etc/ux-x', () => {
    const result = structured('touch');
    expect.soft(result).toMatchObject({
      result_version: 1,
      status: 'exited',
      command: TOUCH,
      exit_code: 1,
      sandbox_denied: true,
      denial: { kind: 'file_write', path: '/etc/ux-x' },
    });
    expect.soft(result.output).toContain('Read-only file system');
    expect
      .soft((result.denial as { message?: string } | undefined)?.message)
      .toEqual(expect.stringContaining('/etc/ux-x'));
    expect.soft(result.next_step).toEqual(expect.stringContaining('require_escalated'));
    expect.soft(existsSync('/etc/ux-x')).toBe(false);
  });

  it('a refused listen: node listening on 127.0.0.1 is named a listen denial', () => {
    const result = structured('listen');
    expect.soft(result).toMatchObject({
      result_version: 1,
      status: 'exited',
      command: LISTEN,
      sandbox_denied: true,
      denial: { kind: 'listen' },
    });
    expect.soft(result.exit_code).not.toBe(0);
    expect.soft(result.output).toContain('EPERM');
    expect.soft(result.output).not.toContain('listening');
    expect.soft(result.next_step).toEqual(expect.stringContaining('require_escalated'));
  });

  it('a refusal: require_escalated, declined by codex exec, keeps the shape and the command', () => {
    const result = structured('escalate');
    expect.soft(result).toMatchObject({ result_version: 1, status: 'refused', command: ESCALATE });
    // `codex exec` declines every elicitation at once without asking anyone. ux tells the client's
    // automatic answer from a person's by how soon it came (`client` within a second), so a stalled
    // machine may read it as the person's; never a rule, the policy or "nobody could be asked".
    const refusal = result.refusal as { decided_by: string; reason: string } | undefined;
    expect.soft(['client', 'person']).toContain(refusal?.decided_by);
    expect.soft(refusal?.reason).toEqual(expect.stringMatching(/\S/));
    expect.soft(result.exit_code).toBeUndefined();
    expect.soft(result.session_id).toBeUndefined();
    expect.soft(result.next_step).toEqual(expect.stringMatching(/\S/));
    expect.soft(existsSync(ESCALATED_FILE)).toBe(false);
  });
});
