// The control plane through the built ux: `ux mcp` (driven by the MCP SDK's client) serves its
// sessions; `ux ps`, `ux attach` (in a real terminal: tmux) and `ux kill` reach them from outside; a
// sandboxed command cannot; bad lines on the socket are answered, not fatal.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect as connectSocket } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { controlDirectory, controlSocketPath } from '@ux/control';
import { useLeakCheck } from '@ux/test-utils';
import { afterEach, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { BIN, makeHome, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((client) => client.close()));
});

beforeAll(() => {
  // Not skipped when tmux is missing: the attach check would then prove nothing, silently.
  execFileSync('tmux', ['-V']);
});

async function startMcp(home: UxHome = makeHome()) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp'],
    cwd: home.workspace,
    env: home.env,
    stderr: 'pipe',
  });
  const client = new Client({ name: 'control-test', version: '2.5.0' }, { capabilities: {} });
  await client.connect(transport);
  open.push(client);
  const pid = transport.pid;
  if (pid === null) throw new Error('ux mcp has no pid');
  return { client, home, pid };
}

interface Structured {
  session_id?: number;
  exit_code?: number;
  output: string;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Structured> {
  const result = await client.callTool({ name, arguments: args });
  return result.structuredContent as unknown as Structured;
}

interface PsEntry {
  pid: number;
  kind: string;
  clientName?: string;
  cwd: string;
  startedAt: number;
  sessions: {
    id: number;
    command: string[];
    tty: boolean;
    state: string;
    exitCode?: number;
    lastLines: string[];
    waitingForInput?: boolean;
  }[];
}

async function ps(home: UxHome): Promise<PsEntry[]> {
  const run = await runUx(['ps', '--json'], home);
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return JSON.parse(run.stdout) as PsEntry[];
}

let tmuxRuns = 0;

/** A tmux server of its own running `args` of the built ux in one pane: read its screen, type into it. */
function uxInTmux(args: string[], home: UxHome) {
  const socket = `ux-control-${process.pid}-${++tmuxRuns}`;
  const tmux = (...rest: string[]) =>
    execFileSync('tmux', ['-L', socket, '-f', '/dev/null', ...rest], { encoding: 'utf8' });
  onTestFinished(() => {
    try {
      tmux('kill-server');
    } catch {
      // Already gone.
    }
  });
  const quoted = [process.execPath, BIN, ...args].map((word) => `'${word}'`).join(' ');
  tmux(
    'new-session',
    '-d',
    '-s',
    'main',
    '-x',
    '120',
    '-y',
    '30',
    '-c',
    home.workspace,
    '-e',
    `UX_HOME=${home.env.UX_HOME}`,
    '-e',
    `HOME=${home.env.HOME}`,
    `${quoted}; echo "[attach exited $?]"; sleep 60`,
  );
  const screen = () => tmux('capture-pane', '-p', '-t', 'main');
  return {
    screen,
    type: (keys: string) => tmux('send-keys', '-t', 'main', '-l', keys),
    key: (key: string) => tmux('send-keys', '-t', 'main', key),
    async waitFor(text: string): Promise<string> {
      const deadline = Date.now() + 20_000;
      for (;;) {
        const shown = screen();
        if (shown.includes(text)) return shown;
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${text}; the screen shows:\n${shown}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
  };
}

describe('the control plane of ux mcp', () => {
  it('ux ps lists the sessions, ux attach types into the REPL, ux kill ends one; the model sees both', async () => {
    const { client, home, pid } = await startMcp();
    const sleep = await call(client, 'exec_command', { cmd: 'sleep 100', yield_time_ms: 300 });
    const repl = await call(client, 'exec_command', { cmd: 'python3 -q', tty: true, yield_time_ms: 1000 });
    expect(sleep.session_id).toBeGreaterThan(0);
    expect(repl.session_id).toBeGreaterThan(0);

    const listed = (await ps(home)).find((entry) => entry.pid === pid);
    expect(listed).toMatchObject({ kind: 'mcp', clientName: 'control-test 2.5.0', cwd: home.workspace });
    const byId = new Map(listed?.sessions.map((session) => [session.id, session]));
    expect(byId.get(sleep.session_id!)).toMatchObject({ state: 'running', tty: false });
    expect(byId.get(sleep.session_id!)?.command.at(-1)).toBe('sleep 100');
    expect(byId.get(repl.session_id!)).toMatchObject({ state: 'running', tty: true, waitingForInput: true });
    // The sleep reads nothing: never "waiting for input".
    expect(byId.get(sleep.session_id!)?.waitingForInput).not.toBe(true);
    const text = (await runUx(['ps'], home)).stdout;
    expect(text).toMatch(new RegExp(`${pid}:${repl.session_id}  waiting for input`));
    expect(text).toMatch(new RegExp(`${pid}:${sleep.session_id}  running`));
    expect(text).toContain(`${pid}  ux mcp control-test 2.5.0`);
    expect(text).toMatch(
      new RegExp(`${pid}:${sleep.session_id}  running  idle .* pipe  local  sandbox \\S+  sleep 100`),
    );

    // A person attaches from another terminal, types into the REPL and detaches.
    const terminal = uxInTmux(['attach', `${pid}:${repl.session_id}`], home);
    await terminal.waitFor(`[ux: running as session ${pid}:${repl.session_id}; keys go to the process`);
    terminal.type('print(6*7)');
    terminal.key('Enter');
    // The REPL's prompt was shown on attach, and the keys went after it.
    await terminal.waitFor('>>> print(6*7)');
    await terminal.waitFor('42');
    terminal.key('C-]');
    const after = await terminal.waitFor('[attach exited 0]');
    expect(after).toContain(`[detached; session ${pid}:${repl.session_id} keeps running]`);
    // The model's next poll sees what the person typed and what it printed.
    const poll = await call(client, 'write_stdin', { session_id: repl.session_id, yield_time_ms: 500 });
    expect(poll.output).toContain('print(6*7)');
    expect(poll.output).toMatch(/^42\r?$/m);
    expect(poll.session_id).toBe(repl.session_id);

    // ux kill ends the sleep only; the model's next poll sees it exited.
    const killed = await runUx(['kill', `${pid}:${sleep.session_id}`], home);
    expect(killed.stderr).toBe('');
    expect(killed.stdout).toBe(`ux: ended session ${pid}:${sleep.session_id} (sleep 100)\n`);
    const ended = await call(client, 'write_stdin', { session_id: sleep.session_id, yield_time_ms: 5000 });
    expect(ended.exit_code).toBeDefined();
    expect(ended.session_id).toBeUndefined();
    const still = (await ps(home)).find((entry) => entry.pid === pid);
    expect(still?.sessions.find((session) => session.id === repl.session_id)?.state).toBe('running');
  });

  it('names the candidates when a target is unknown, and refuses a malformed one', async () => {
    const home = makeHome();
    const unknown = await runUx(['kill', '999999:1001'], home);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toMatch(/^ux: no ux process 999999 serves a control socket; /);
    const { client, pid } = await startMcp(home);
    const started = await call(client, 'exec_command', { cmd: 'sleep 100', yield_time_ms: 300 });
    const wrong = await runUx(['attach', `${pid}:${started.session_id! + 1}`], home);
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toContain(
      `ux process ${pid} has no session ${started.session_id! + 1}; the sessions are`,
    );
    expect(wrong.stderr).toContain(`${pid}:${started.session_id}`);
    const malformed = await runUx(['kill', 'abc'], home);
    expect(malformed.status).toBe(2);
    expect(malformed.stderr).toContain('"abc" is not a session; usage: ux kill PID:SESSION');
  });

  it('removes the socket of a process that was killed', async () => {
    const home = makeHome();
    const child = spawn(process.execPath, [BIN, 'mcp'], {
      cwd: home.workspace,
      env: home.env,
      stdio: 'pipe',
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    const path = controlSocketPath(child.pid!);
    const deadline = Date.now() + 20_000;
    while (!existsSync(path)) {
      if (Date.now() > deadline) throw new Error(`ux mcp made no socket at ${path}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGKILL');
    await exited;
    expect(existsSync(path)).toBe(true);
    expect((await ps(home)).some((entry) => entry.pid === child.pid)).toBe(false);
    expect(existsSync(path)).toBe(false);
  });

  it('a process that ends removes its own socket', async () => {
    const { client, pid } = await startMcp();
    const path = controlSocketPath(pid);
    expect(existsSync(path)).toBe(true);
    open.splice(open.indexOf(client), 1);
    await client.close();
    const deadline = Date.now() + 20_000;
    while (existsSync(path) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(existsSync(path)).toBe(false);
  });
});

describe('the control plane of ux exec', () => {
  it('ux ps lists an attached ux exec and its session; ux kill ends it there', async () => {
    const home = makeHome();
    const terminal = uxInTmux(['exec', '--', 'echo started; sleep 100'], home);
    await terminal.waitFor('started');
    const mine = (await ps(home)).find((entry) => entry.kind === 'exec' && entry.cwd === home.workspace);
    expect(mine?.sessions).toHaveLength(1);
    const session = mine?.sessions[0];
    expect(session).toMatchObject({ state: 'running', tty: false });
    expect(session?.command.at(-1)).toBe('echo started; sleep 100');
    const killed = await runUx(['kill', `${mine?.pid}:${session?.id}`], home);
    expect(killed.status).toBe(0);
    const screen = await terminal.waitFor('[attach exited 143]');
    expect(screen).toContain(`[ux: session ${session?.id} exited with code 143`);
    // Its socket went with it.
    expect(existsSync(controlSocketPath(mine!.pid))).toBe(false);
  });
});

describe('the control plane of ux exec-server', () => {
  it("lists its hosted processes, and ux kill ends one that the client's model then sees exited", async () => {
    const home = makeHome({
      config: `[environments.dev]\ncommand = [${JSON.stringify(process.execPath)}, ${JSON.stringify(BIN)}, "exec-server", "--listen", "stdio"]\n`,
    });
    const { client, pid } = await startMcp(home);
    const sleep = await call(client, 'exec_command', {
      cmd: 'sleep 100',
      environment_id: 'dev',
      yield_time_ms: 500,
    });
    expect(sleep.session_id).toBeGreaterThan(0);
    const listed = await ps(home);
    const mcp = listed.find((entry) => entry.pid === pid);
    expect(mcp?.sessions.find((session) => session.id === sleep.session_id)).toMatchObject({
      environment: 'dev',
      state: 'running',
    });
    // The exec-server the mcp started for `dev` (its child) hosts the same command.
    const server = listed.find(
      (entry) => entry.kind === 'exec-server' && entry.cwd === home.workspace && entry.sessions.length > 0,
    );
    expect(server).toBeDefined();
    const hosted = server?.sessions.find((session) => session.command.at(-1)?.endsWith('sleep 100'));
    expect(hosted).toMatchObject({ state: 'running', tty: false });
    const killed = await runUx(['kill', `${server?.pid}:${hosted?.id}`], home);
    expect(killed.stderr).toBe('');
    expect(killed.status).toBe(0);
    const ended = await call(client, 'write_stdin', { session_id: sleep.session_id, yield_time_ms: 5000 });
    expect(ended.exit_code).toBeDefined();
    expect(ended.session_id).toBeUndefined();
  });
});

describe('attacks on the control plane', () => {
  it('a sandboxed command cannot list or connect to any control socket', async () => {
    const { home, pid } = await startMcp();
    const path = controlSocketPath(pid);
    const probe = [
      'import os, socket',
      `d = ${JSON.stringify(controlDirectory())}`,
      'try:\n    print("LISTED", os.listdir(d))\nexcept OSError as e:\n    print("list refused", e.errno)',
      `s = socket.socket(socket.AF_UNIX)`,
      `try:\n    s.connect(${JSON.stringify(path)})\n    s.sendall(b'{"v":1,"id":1,"method":"sessions.list"}\\n')\n    print("CONNECTED", s.recv(200))\nexcept OSError as e:\n    print("connect refused", e.errno)`,
    ].join('\n');
    const run = await runUx(['exec', '--', 'python3', '-c', probe], home);
    expect(run.stdout).toContain('list refused');
    expect(run.stdout).toContain('connect refused');
    expect(run.stdout).not.toContain('LISTED');
    expect(run.stdout).not.toContain('CONNECTED');
    // The same probe outside any sandbox does reach it: the check above can fail.
    const outside = execFileSync('python3', ['-c', probe], { encoding: 'utf8' });
    expect(outside).toContain('CONNECTED');
  });

  it('bad lines get error answers and the server goes on serving', async () => {
    const { pid, home } = await startMcp();
    const socket = connectSocket(controlSocketPath(pid));
    onTestFinished(() => {
      socket.destroy();
    });
    const answers: Record<string, unknown>[] = [];
    let buffer = '';
    socket.on('data', (data) => {
      buffer += String(data);
      for (let at = buffer.indexOf('\n'); at >= 0; at = buffer.indexOf('\n')) {
        answers.push(JSON.parse(buffer.slice(0, at)));
        buffer = buffer.slice(at + 1);
      }
    });
    await new Promise((resolve) => socket.once('connect', resolve));
    const lines = [
      'not json at all',
      '{"v":2,"id":2,"method":"hello"}',
      '{"v":1,"id":3,"method":"sessions.write","params":{"session":"1; rm -rf /"}}',
      '{"v":1,"id":4,"method":"sessions.write","params":{"session":1000,"data":"!!"}}',
      '{"v":1,"id":5,"method":"sessions.kill","params":{"session":424242}}',
      '{"v":1,"id":6,"method":"sessions.nope"}',
      `{"v":1,"id":7,"method":"hello","params":{"x":"${'a'.repeat(2 * 1024 * 1024)}"}}`,
      '{"v":1,"id":8,"method":"sessions.list"}',
    ];
    socket.write(`${lines.join('\n')}\n`);
    const deadline = Date.now() + 20_000;
    while (!answers.some((answer) => answer.id === 8) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const code = (id: number) =>
      (answers.find((answer) => answer.id === id)?.error as { code?: string } | undefined)?.code;
    // Not JSON, another version, a line over 1 MiB: answered with id 0 (the server cannot trust theirs).
    const unread = answers.filter((answer) => answer.id === 0);
    expect(unread.length).toBe(3);
    for (const answer of unread) expect(answer.error).toMatchObject({ code: 'bad_request' });
    expect(answers.some((answer) => answer.id === 2)).toBe(false);
    expect(code(3)).toBe('bad_request');
    expect(['bad_request', 'not_found']).toContain(code(4));
    expect(code(5)).toBe('not_found');
    expect(code(6)).toBe('unknown_method');
    expect(answers.find((answer) => answer.id === 8)).toEqual({ v: 1, id: 8, result: { sessions: [] } });
    // Still listed: the server did not crash.
    expect((await ps(home)).some((entry) => entry.pid === pid)).toBe(true);
  });
});
