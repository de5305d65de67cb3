// Ctrl-C through what users run, with the default sandbox on: `ux mcp` driven by the MCP SDK's client,
// `ux exec --tty` and `ux sandbox` in a real terminal, `ux sandbox` and `ux exec-server` on pipes.
import { spawn } from 'node:child_process';
import { useLeakCheck } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { BIN, makeHome, startUxInTerminal, warmUpTerminalSpawner } from './cli-harness.js';
import { connectMcp } from './mcp-wire.js';

beforeAll(() => warmUpTerminalSpawner());
useLeakCheck();

describe('ux mcp (MCP SDK client, default sandbox)', () => {
  it('tty: Ctrl-C interrupts time.sleep in the Python REPL, which lives on and answers print(6*7)', async () => {
    const { call } = await connectMcp();
    const started = await call('exec_command', {
      cmd: 'python3 -q',
      tty: true,
      login: false,
      yield_time_ms: 1500,
    });
    expect(started.session, started.text).toBeDefined();
    const id = Number(started.session);
    const sandbox = await call('exec_command', { cmd: 'echo sandbox=$UX_SANDBOX', login: false });
    expect(sandbox.output).toContain('sandbox=bwrap');
    /** Writes `chars`, then polls until the output since the write holds `needle`. */
    const until = async (chars: string, needle: RegExp) => {
      let last = await call('write_stdin', { session_id: id, chars, yield_time_ms: 1000 });
      let seen = last.output;
      for (let round = 0; !needle.test(seen) && round < 6 && last.session !== undefined; round++) {
        last = await call('write_stdin', { session_id: id, yield_time_ms: 5000 });
        seen += last.output;
      }
      return { ...last, output: seen };
    };
    // Ctrl-C once the sleep has begun (the echo of the line shows "SLEEP" + "ING", not SLEEPING).
    const sleeping = await until('import time; print("SLEEP" + "ING"); time.sleep(30)\n', /SLEEPING/);
    expect(sleeping.output).toContain('SLEEPING');
    const interrupted = await until('\u0003', /KeyboardInterrupt[\s\S]*>>> /);
    expect(interrupted.output).toContain('KeyboardInterrupt');
    expect(interrupted.session).toBe(String(id));
    const answer = await until('print(6*7)\n', /\b42\b/);
    expect(answer.output).toMatch(/\b42\b/);
    expect(answer.session).toBe(String(id));
  });

  it('pipes: Ctrl-C runs the INT trap and the receipt shows its exit code 42', async () => {
    const { call } = await connectMcp();
    const started = await call('exec_command', {
      cmd: "trap 'echo INT-TRAP; exit 42' INT; echo READY; while true; do sleep 1; done",
      login: false,
      yield_time_ms: 1000,
    });
    expect(started.output).toContain('READY');
    const done = await call('write_stdin', {
      session_id: Number(started.session),
      chars: '\u0003',
      yield_time_ms: 3000,
    });
    expect(done.output).toContain('INT-TRAP');
    expect(done.exit).toBe('42');
  });
});

describe('ux exec --tty in a real terminal', () => {
  it('Ctrl-C gives KeyboardInterrupt and the sandboxed REPL continues', async () => {
    const home = makeHome();
    const terminal = await startUxInTerminal(
      ['exec', '--tty', '--yield-ms', '1000', '--', 'python3 -q'],
      home,
    );
    await terminal.waitFor('>>> ');
    await terminal.type('import os, time; print(os.environ.get("UX_SANDBOX")); time.sleep(30)\r');
    await terminal.waitFor('bwrap');
    await terminal.type('\u0003');
    await terminal.waitFor('KeyboardInterrupt');
    await terminal.waitFor('>>> ');
    await terminal.type('print(6*7)\r');
    await terminal.waitFor(/\b42\b/);
    await terminal.type('exit()\r');
    expect(await terminal.exitCode()).toBe(0);
  });
});

describe('ux sandbox', () => {
  it('in a terminal: Ctrl-C reaches the REPL, the sandbox stays', async () => {
    const home = makeHome();
    const terminal = await startUxInTerminal(['sandbox', '--', 'python3', '-q'], home);
    await terminal.waitFor('>>> ');
    // Ctrl-C once the sleep has begun (the echo of the line shows "SLEEP" + "ING", not SLEEPING).
    await terminal.type('import time; print("SLEEP" + "ING"); time.sleep(30)\r');
    await terminal.waitFor('SLEEPING');
    await terminal.type('\u0003');
    await terminal.waitFor('KeyboardInterrupt');
    await terminal.type('print(6*7)\r');
    await terminal.waitFor(/\b42\b/);
    await terminal.type('exit()\r');
    expect(await terminal.exitCode()).toBe(0);
  });

  it.each([
    ['SIGINT', "trap 'echo INT-TRAP; exit 42' INT", 'INT-TRAP', 42],
    ['SIGTERM', "trap 'echo TERM-TRAP; exit 43' TERM", 'TERM-TRAP', 43],
  ] as const)(
    'without a terminal: %s sent to ux reaches the command, whose code ux exits with',
    async (signal, trap, word, code) => {
      const home = makeHome();
      // sh (dash), not bash: bash 5.2 can loop forever re-raising a SIGINT that arrives while it
      // reaps a child the same signal killed (seen once in CI, with the command's own pid as sender).
      const child = spawn(
        process.execPath,
        [BIN, 'sandbox', '--', 'sh', '-c', `${trap}; echo READY; while :; do sleep 1; done`],
        {
          cwd: home.workspace,
          env: home.env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let output = '';
      child.stdout.on('data', (chunk) => {
        output += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.on('close', (status) => resolve(status)));
      for (let waited = 0; !output.includes('READY') && waited < 10_000; waited += 20)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(output).toContain('READY');
      child.kill(signal);
      expect(await exited).toBe(code);
      expect(output).toContain(word);
    },
  );
});
