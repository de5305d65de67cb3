// The unit cases of docs/reference/door.md §15.2, pruning, pause, bad input and the standalone shell
// tool, with real processes.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { planTools } from '@ux/features';
import { waitUntilDead } from '@ux/protocol-testing';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { deltaText, eventually, makeDoor, ofType, parseReceipt, spawner } from '../test/test-support.js';
import { MAX_UNIFIED_EXEC_PROCESSES } from './process-store.js';

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

const readPid = (file: string) =>
  existsSync(file) && readFileSync(file, 'utf8') !== '' ? Number(readFileSync(file, 'utf8')) : undefined;
const ctx = (callId = 'call-1') => ({ callId });

describe('docs/reference/door.md §15.2 sessions', () => {
  it('keeps shell state across writes in one session and not across sessions', async () => {
    const { door } = makeDoor();
    const a = parseReceipt(
      (await door.execCommand({ cmd: 'bash --norc -i', tty: true, yield_time_ms: 400 }, ctx('a'))).text,
    );
    const b = parseReceipt(
      (await door.execCommand({ cmd: 'bash --norc -i', tty: true, yield_time_ms: 400 }, ctx('b'))).text,
    );
    await door.writeStdin(
      { session_id: a.sessionId!, chars: 'export UX_TEST_VAR=persisted\n', yield_time_ms: 300 },
      ctx('w'),
    );
    const same = parseReceipt(
      (
        await door.writeStdin(
          { session_id: a.sessionId!, chars: 'echo "[$UX_TEST_VAR]"\n', yield_time_ms: 400 },
          ctx('w'),
        )
      ).text,
    );
    expect(same.output).toContain('[persisted]');
    const other = parseReceipt(
      (
        await door.writeStdin(
          { session_id: b.sessionId!, chars: 'echo "[$UX_TEST_VAR]"\n', yield_time_ms: 400 },
          ctx('w'),
        )
      ).text,
    );
    expect(other.output).toContain('[]');
  });

  it('returns incomplete output on a short yield and the rest on a later poll', async () => {
    const { door } = makeDoor();
    const first = parseReceipt(
      (await door.execCommand({ cmd: 'echo one; sleep 0.6; echo two', yield_time_ms: 250 }, ctx())).text,
    );
    expect(first).toMatchObject({ sessionId: 1000, output: 'one\n' });
    const rest = parseReceipt(
      (await door.writeStdin({ session_id: 1000, yield_time_ms: 5000 }, ctx('p'))).text,
    );
    expect(rest).toMatchObject({ exitCode: 0, output: 'two\n' });
  });

  it('stops the yield clock while paused', async () => {
    const { door, events } = makeDoor();
    door.setPaused(true);
    let answered = false;
    const call = door
      .execCommand({ cmd: 'sleep 0.3; echo after-pause; sleep 30', yield_time_ms: 250 }, ctx())
      .finally(() => {
        answered = true;
      });
    // Output printed 0.3 s after the start has reached the door, past the 250 ms yield: with the clock
    // running the call would have answered by then.
    expect(await eventually(() => deltaText(events).includes('after-pause'), 15_000)).toBe(true);
    expect(answered).toBe(false);
    door.setPaused(false);
    const receipt = parseReceipt((await call).text);
    expect(receipt.output).toContain('after-pause');
    expect(receipt.sessionId).toBe(1000);
  });

  it('forgets an exited process: its id is unknown and the store is empty', async () => {
    const { door } = makeDoor();
    await door.execCommand({ cmd: 'exit 17' }, ctx());
    expect(door.processes()).toEqual([]);
    expect(await door.writeStdin({ session_id: 1000 }, ctx('p'))).toMatchObject({
      success: false,
      result: { status: 'failed', error: { message: 'write_stdin failed: Unknown process id 1000' } },
    });
  });

  it('keeps the exit code of a pipeline', async () => {
    const { door } = makeDoor();
    expect(parseReceipt((await door.execCommand({ cmd: 'echo x | exit 17' }, ctx())).text).exitCode).toBe(17);
  });

  it('pins the environment over inherited values and keeps PATH', async () => {
    const { door } = makeDoor({
      door: { baseEnvironment: { PATH: process.env.PATH, NO_COLOR: '0', KEEP_ME: 'yes' } },
    });
    const receipt = parseReceipt((await door.execCommand({ cmd: 'env', login: false }, ctx())).text);
    const lines = receipt.output.split('\n');
    expect(lines).toContain('NO_COLOR=1');
    expect(lines).toContain('KEEP_ME=yes');
    expect(lines).toContain(`PATH=${process.env.PATH}`);
    expect(lines).toContain('TERM=dumb');
    expect(lines).toContain('UX_CI=1');
  });
});

describe('pruning', () => {
  it(`keeps at most ${MAX_UNIFIED_EXEC_PROCESSES} processes, sparing the recently used one`, async () => {
    const { door } = makeDoor();
    const keep = parseReceipt(
      (await door.execCommand({ cmd: '/bin/cat', tty: true, yield_time_ms: 250 }, ctx('keep'))).text,
    );
    // Fillers start in batches of 7, in parallel; the kept session is used between batches, so it stays
    // among the 8 most recently used and pruning has to pick an older filler.
    const fillers: number[] = [];
    for (let batch = 0; batch * 7 < MAX_UNIFIED_EXEC_PROCESSES; batch++) {
      const size = Math.min(7, MAX_UNIFIED_EXEC_PROCESSES - batch * 7);
      const started = await Promise.all(
        Array.from({ length: size }, (_, i) =>
          door.execCommand({ cmd: 'exec sleep 60', login: false, yield_time_ms: 250 }, ctx(`f${batch}-${i}`)),
        ),
      );
      fillers.push(...started.map((response) => parseReceipt(response.text).sessionId!));
      await door.writeStdin({ session_id: keep.sessionId!, chars: 'x', yield_time_ms: 250 }, ctx('touch'));
    }
    expect(door.processes()).toHaveLength(MAX_UNIFIED_EXEC_PROCESSES);
    const echo = parseReceipt(
      (
        await door.writeStdin(
          { session_id: keep.sessionId!, chars: 'still-here\n', yield_time_ms: 300 },
          ctx('w'),
        )
      ).text,
    );
    expect(echo.output).toContain('still-here');
    const live = new Set(door.processes().map((info) => info.sessionId));
    const gone = fillers.filter((id) => !live.has(id));
    expect(gone).toHaveLength(1);
    expect(fillers.slice(0, 7)).toContain(gone[0]);
    const pruned = gone[0]!;
    expect(await door.writeStdin({ session_id: pruned }, ctx('p'))).toMatchObject({
      success: false,
      result: { status: 'failed', error: { message: `write_stdin failed: Unknown process id ${pruned}` } },
    });
  }, 60_000);
});

describe('shutdown', () => {
  it('ends a process whose call was still starting it when the shutdown began', async () => {
    const { door, cwd, events } = makeDoor({ door: { earlyExitWindowMs: 60_000 } });
    const pidFile = join(cwd, 'pid');
    // The call is in its early-exit window (not stored yet) when the shutdown comes: the window is a
    // minute long (not the default 150 ms, which a loaded machine can pass before the test looks), and
    // the shutdown comes once the process has started. The shutdown stops the window's wait and ends
    // the process at once; waiting the window out would outlast the test's timeout.
    const call = door.execCommand(
      { cmd: `printf '%s' $$ > ${pidFile} && exec sleep 60`, login: false, yield_time_ms: 5_000 },
      ctx('starting'),
    );
    expect(await eventually(() => readPid(pidFile) !== undefined, 15_000)).toBe(true);
    await door.shutdown();
    const response = await call;
    expect(response.result).toMatchObject({ status: 'failed', error: { code: 'session_shut_down' } });
    expect(response.text).toMatch(/: stopped after [\d.]+s: the session shut down and ended its processes\n/);
    expect(await eventually(() => readPid(pidFile) !== undefined)).toBe(true);
    expect(await waitUntilDead(readPid(pidFile)!)).toBe(true);
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
  });

  it('an interrupt inside the early-exit window stops the wait at once and leaves the process running', async () => {
    const { door, cwd } = makeDoor({ door: { earlyExitWindowMs: 60_000 } });
    const pidFile = join(cwd, 'pid');
    const call = door.execCommand(
      { cmd: `printf '%s' $$ > ${pidFile} && exec sleep 60`, login: false, yield_time_ms: 30_000 },
      ctx('interrupted'),
    );
    expect(await eventually(() => readPid(pidFile) !== undefined, 15_000)).toBe(true);
    door.interrupt();
    const response = await call;
    expect(response.text).toMatch(
      /aborted by user after [\d.]+s; the process is still running with session ID \d+/,
    );
    expect(response.result).toMatchObject({ status: 'interrupted', session_id: expect.any(Number) });
    const pid = readPid(pidFile)!;
    expect(() => process.kill(pid, 0)).not.toThrow();
    await door.shutdown();
    expect(await waitUntilDead(pid)).toBe(true);
  });
});

describe('bad input', () => {
  it.each([
    [{ cmd: 42 }, 'invalid exec_command arguments: cmd: must be a string (got 42)'],
    [{}, 'invalid exec_command arguments: cmd: is required'],
    [{ cmd: '   ' }, 'invalid exec_command arguments: cmd: must not be empty or only whitespace'],
    [
      { cmd: 'ls', yield_time_ms: -1 },
      'invalid exec_command arguments: yield_time_ms: must not be negative (got -1)',
    ],
    ['{"cmd": ', /^invalid exec_command arguments: arguments are not valid JSON/],
  ])('refuses exec_command %j without spawning anything', async (args, message) => {
    const { door, events } = makeDoor();
    const response = await door.execCommand(args, ctx());
    expect(response.success).toBe(false);
    expect(response.text).toMatch(message);
    expect(response.result).toMatchObject({ status: 'failed', error: { code: 'invalid_arguments' } });
    expect(events).toEqual([]);
    expect(door.processes()).toEqual([]);
  });

  it('clamps a huge yield instead of refusing it', async () => {
    const { door } = makeDoor();
    expect(
      parseReceipt((await door.execCommand({ cmd: 'true', yield_time_ms: 10 ** 12 }, ctx())).text).exitCode,
    ).toBe(0);
  });

  it.each([
    [
      { session_id: 'x' },
      'write_stdin failed: invalid write_stdin arguments: session_id: must be a number (got "x")',
    ],
    [{ session_id: 4242 }, 'write_stdin failed: Unknown process id 4242'],
  ])('refuses write_stdin %j', async (args, message) => {
    const { door } = makeDoor();
    const response = await door.writeStdin(args, ctx());
    expect(response).toMatchObject({ success: false, result: { status: 'failed', error: { message } } });
    expect(response.text.split('\n')[0]).toBe(message);
  });

  it('refuses text for a session without a terminal, but not Ctrl-C', async () => {
    const { door } = makeDoor();
    await door.execCommand({ cmd: 'sleep 30', yield_time_ms: 250 }, ctx());
    expect(await door.writeStdin({ session_id: 1000, chars: 'hello' }, ctx('w'))).toMatchObject({
      success: false,
      result: {
        status: 'failed',
        error: {
          message:
            'write_stdin failed: stdin is closed for this session; rerun exec_command with tty=true to keep stdin open',
        },
      },
    });
  });

  it('refuses oversized chars', async () => {
    const { door } = makeDoor();
    await door.execCommand({ cmd: '/bin/cat', tty: true, yield_time_ms: 250 }, ctx());
    expect(
      await door.writeStdin({ session_id: 1000, chars: 'x'.repeat(2 * 1024 * 1024) }, ctx('w')),
    ).toMatchObject({
      success: false,
      result: {
        status: 'failed',
        error: {
          message: 'write_stdin failed: chars holds 2097152 bytes; at most 1048576 are accepted per call',
        },
      },
    });
  });

  it('names an unknown tool and a missing working directory', async () => {
    const { door } = makeDoor();
    expect(await door.call('shell', { command: 'ls' }, ctx())).toMatchObject({
      success: false,
      result: {
        status: 'failed',
        error: { message: 'unknown tool "shell"; this session offers exec_command, write_stdin' },
      },
    });
    const missing = await door.execCommand({ cmd: 'ls', workdir: '/nonexistent/dir' }, ctx());
    expect(missing.success).toBe(false);
    // The command as the call gave it, not the argv it became.
    expect(missing.text.split('\n')[0]).toBe(
      'Failed `ls`: failed to start /bin/bash: working directory /nonexistent/dir does not exist',
    );
    expect(missing.result).toMatchObject({
      status: 'failed',
      command: 'ls',
      error: { code: 'spawn_failed' },
    });
  });

  it('refuses login when config disallows login shells', async () => {
    const { door } = makeDoor({ door: { allowLoginShell: false } });
    expect(await door.execCommand({ cmd: 'true', login: true }, ctx())).toMatchObject({
      success: false,
      result: {
        status: 'failed',
        error: { message: 'login shell is disabled by config; omit `login` or set it to false.' },
      },
    });
  });

  it('refuses an early-exit window that is not 0–60000 ms', () => {
    for (const earlyExitWindowMs of [-1, Number.NaN, 60_001])
      expect(() => makeDoor({ door: { earlyExitWindowMs } })).toThrow(
        `earlyExitWindowMs must be a number of milliseconds from 0 to 60000, not ${earlyExitWindowMs}`,
      );
  });

  it('rejects an unknown op', async () => {
    const { door } = makeDoor();
    await expect(door.handleOp({ type: 'reboot' })).rejects.toThrow('unknown op {"type":"reboot"}');
  });
});

describe('tool plans', () => {
  it('offers exec_command and write_stdin with the variant of the plan', () => {
    const { door } = makeDoor();
    expect(door.tools.map((tool) => tool.name)).toEqual(['exec_command', 'write_stdin']);
  });

  it('runs the standalone shell_command through the same policy and kills it at its timeout', async () => {
    const { door, events } = makeDoor({ flags: { unified_exec: false } });
    expect(door.tools.map((tool) => tool.name)).toEqual(['shell_command']);
    const ok = await door.call('shell_command', { command: 'echo one-shot; exit 3' }, ctx('s1'));
    expect(ok.text).toMatch(/^Exit code: 3\nWall time: \d+\.\d seconds\nOutput:\none-shot\n$/);
    const slow = await door.call(
      'shell_command',
      { command: 'echo started; sleep 30 & wait', timeout_ms: 300 },
      ctx('s2'),
    );
    expect(slow.text).toMatch(
      /^Exit code: 124\nWall time: 0\.\d seconds\nOutput:\nstarted\n\ncommand timed out after 300 ms; its process group was killed$/,
    );
    expect(ofType(events, 'exec_command_end').map((event) => [event.source, event.exit_code])).toEqual([
      ['shell_command', 3],
      ['shell_command', 124],
    ]);
    expect(door.processes()).toEqual([]);
  });

  it('in zsh-fork mode hides `shell`, and without a broker refuses to run rather than run direct', async () => {
    const { door, events } = makeDoor({
      door: {
        toolPlan: planTools({
          flags: { shell_tool: true, unified_exec: true, shell_zsh_fork: true, unified_exec_zsh_fork: true },
          platform: 'linux',
          zshFork: { zshPath: '/bin/bash', execveWrapperPath: '/bin/true' },
        }),
      },
    });
    expect((door.tools[0]!.parameters as { properties: object }).properties).not.toHaveProperty('shell');
    expect(await door.execCommand({ cmd: 'echo via-configured-shell' }, ctx())).toMatchObject({
      success: false,
      result: {
        status: 'failed',
        command: 'echo via-configured-shell',
        error: { message: 'the zsh fork needs an escalation broker, and this door was given none' },
      },
    });
    expect(ofType(events, 'exec_command_begin')).toMatchObject([
      { sandbox: 'none', blocked: { status: 'failed' } },
    ]);
    expect(await door.execCommand({ cmd: 'true', shell: '/bin/sh' }, ctx('b'))).toMatchObject({
      success: false,
      result: {
        status: 'failed',
        error: { message: 'invalid exec_command arguments: shell: unknown argument' },
      },
    });
  });

  it('refuses every call when the plan says the zsh fork cannot start', async () => {
    const { door } = makeDoor({
      door: {
        toolPlan: planTools({
          flags: { shell_tool: true, unified_exec: true, shell_zsh_fork: true, unified_exec_zsh_fork: true },
          platform: 'linux',
        }),
      },
    });
    const response = await door.execCommand({ cmd: 'true' }, ctx());
    expect(response.success).toBe(false);
    expect(response.text).toMatch(
      /^Failed `true`: exec_command failed: the zsh fork cannot start: no patched zsh: build it with `ux zsh-fork build`/,
    );
    expect(response.result).toMatchObject({
      status: 'failed',
      command: 'true',
      error: { code: 'zsh_fork_unavailable' },
    });
    expect(door.processes()).toEqual([]);
  });

  it('delivers late output deltas only after spawn, cut at character boundaries', async () => {
    const { door, events } = makeDoor();
    await door.execCommand({ cmd: "sleep 0.3; printf 'héllo wörld €'", yield_time_ms: 1000 }, ctx());
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    const deltas = ofType(events, 'exec_command_output_delta');
    expect(deltas.length).toBeGreaterThan(0);
    for (const delta of deltas) {
      expect(new TextDecoder('utf-8', { fatal: true }).decode(delta.chunk)).toBeTruthy();
    }
    expect(deltaText(events)).toBe('héllo wörld €');
  });
});
