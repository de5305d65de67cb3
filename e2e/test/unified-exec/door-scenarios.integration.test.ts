// Codex's black-box unified-exec scenarios (docs/reference/door.md §15.1), with real processes, run
// once per environment of one door: `local` (this machine), `box` (a real `ux exec-server` over
// WebSocket with a capability token) and `dev` (a real `ux exec-server` over stdio). Each scenario picks
// its environment with
// `environment_id` on every `exec_command`; the servers run on this machine, so the door's temp cwd is
// the cwd everywhere. Scenarios 2–6 and 8–22 run in all three. 23 and 24 run in the remote
// environments, sandboxed by the server (bubblewrap there); the local door here has no sandbox backend,
// and the local sandboxed runs are in @ux/sandbox-bwrap's `door-with-bwrap.integration.test.ts`.
// Not here: 1 (apply_patch) applies to local only, since a remote environment runs it as a command
// (the door with bwrap: @ux/sandbox-bwrap's `door-apply-patch.integration.test.ts`); 7 needs a managed network proxy; 25 is macOS; 26 is ignored
// upstream. Routing, wrong ids, tokens and lost servers are in `door-environments.integration.test.ts`.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  createExecServerSandbox,
  createExecServerSpawner,
  spawnStdioExecServer,
} from '@ux/exec-server-client';
import type { OrchestratorSettings } from '@ux/orchestrator';
import type { EffectivePolicy } from '@ux/protocol';
import { isAlive, waitUntilDead } from '@ux/protocol-testing';
import { describe, expect, it } from 'vitest';
import {
  type DoorOptions,
  deltaText,
  eventually,
  makeDoor,
  ofType,
  parseReceipt,
  scriptedReviewer,
} from '../support/door.js';
import { useThreeEnvironments } from './test-environments.js';

const environments = useThreeEnvironments();

const ctx = (callId = 'call-1') => ({ callId });

type EnvironmentId = 'local' | 'box' | 'dev';

/**
 * A door with `local`, `box` and `dev`, and `exec`: its `exec_command` with `environment_id` set to
 * `environmentId` on every call.
 */
function doorIn(environmentId: EnvironmentId, options: DoorOptions = {}) {
  const made = environments.door(options);
  const exec = (args: Record<string, unknown>, context = ctx()) =>
    made.door.execCommand({ ...args, environment_id: environmentId }, context);
  return { ...made, exec };
}

/** The command line of the parent of the shell a command ran in. */
const PARENT = "tr '\\0' ' ' < /proc/$PPID/cmdline";

describe.each<EnvironmentId>(['local', 'box', 'dev'])('black-box scenarios in %s', (environmentId) => {
  it('runs where it says: the shell is a child of that environment’s server, or of no server', async () => {
    // Without this, a helper that dropped environment_id would run every scenario locally, three times.
    const { exec } = doorIn(environmentId);
    const receipt = parseReceipt((await exec({ cmd: `printf '%s\\n' "$HOME"; ${PARENT}` })).text);
    const [home, parent] = receipt.output.split('\n');
    if (environmentId === 'local') expect(parent).not.toContain('exec-server-bin.js');
    if (environmentId === 'box') expect(parent).toContain('exec-server-bin.js --listen ws://');
    if (environmentId === 'dev') expect(parent).toContain('exec-server-bin.js --listen stdio');
    // Not this machine's home: its login files must not decide the scenarios' output or timing.
    expect(home).not.toBe(homedir());
    if (environmentId !== 'local') expect(home).toBe(environments.home);
  });

  it('2. emits Begin with the shell argv and the session cwd', async () => {
    const { exec, events, cwd } = doorIn(environmentId);
    const response = await exec({ shell: 'bash', cmd: '/bin/echo hello unified exec' });
    expect(parseReceipt(response.text)).toMatchObject({ exitCode: 0, output: 'hello unified exec\n' });
    expect(ofType(events, 'exec_command_begin')).toEqual([
      {
        type: 'exec_command_begin',
        call_id: 'call-1',
        process_id: '1000',
        command: ['bash', '-lc', '/bin/echo hello unified exec'],
        cwd,
        source: 'unified_exec_startup',
        sandbox: 'none',
      },
    ]);
  });

  it('3. resolves relative and absolute workdirs', async () => {
    const { exec, events, cwd } = doorIn(environmentId);
    mkdirSync(join(cwd, 'sub'));
    const relative = parseReceipt((await exec({ cmd: 'pwd', workdir: 'sub' }, ctx('a'))).text);
    expect(relative.output).toBe(`${join(cwd, 'sub')}\n`);
    const absolute = parseReceipt((await exec({ cmd: 'pwd', workdir: '/tmp' }, ctx('b'))).text);
    expect(absolute.output).toBe('/tmp\n');
    expect(ofType(events, 'exec_command_begin').map((event) => event.cwd)).toEqual([
      join(cwd, 'sub'),
      '/tmp',
    ]);
  });

  it('4–5. emits one End with the output of a short command', async () => {
    const { exec, events } = doorIn(environmentId);
    await exec({ cmd: "/bin/echo END-EVENT; printf 'HELLO-UEXEC'", yield_time_ms: 250 });
    const ends = ofType(events, 'exec_command_end');
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({
      call_id: 'call-1',
      process_id: '1000',
      exit_code: 0,
      status: 'completed',
    });
    expect(ends[0]!.aggregated_output).toContain('END-EVENT');
    expect(ends[0]!.stdout).toContain('HELLO-UEXEC');
  });

  it('6. gives a longer command exactly one End, from the exit watcher', async () => {
    const { exec, events } = doorIn(environmentId);
    const response = parseReceipt(
      (await exec({ cmd: "sleep 0.5; printf 'HELLO-FULL-LIFECYCLE'", yield_time_ms: 1000 })).text,
    );
    expect(response).toMatchObject({ exitCode: 0, output: 'HELLO-FULL-LIFECYCLE' });
    expect(response.sessionId).toBeUndefined();
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    // A later command run to its End: a second End of the first (a server sends one process's
    // notifications before a later process's) would be in by then.
    await exec({ cmd: 'echo later' }, ctx('later'));
    expect(await eventually(() => ofType(events, 'exec_command_end').length >= 2)).toBe(true);
    const ends = ofType(events, 'exec_command_end').filter((event) => event.call_id === 'call-1');
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ process_id: '1000', exit_code: 0 });
    expect(ends[0]!.aggregated_output).toContain('HELLO-FULL-LIFECYCLE');
    expect(ofType(events, 'exec_command_begin')[0]!.process_id).toBe('1000');
  });

  it('8. reports a terminal interaction with the original call id and the exact stdin', async () => {
    const { door, exec, events } = doorIn(environmentId);
    const start = parseReceipt(
      (await exec({ cmd: '/bin/bash --norc -i', tty: true, yield_time_ms: 500 }, ctx('exec-1'))).text,
    );
    expect(start.sessionId).toBe(1000);
    const reply = parseReceipt(
      (
        await door.writeStdin(
          { session_id: 1000, chars: 'echo WSTDIN-MARK\n', yield_time_ms: 500 },
          ctx('write-1'),
        )
      ).text,
    );
    expect(reply.output).toContain('WSTDIN-MARK');
    expect(ofType(events, 'terminal_interaction')).toEqual([
      { type: 'terminal_interaction', call_id: 'exec-1', process_id: '1000', stdin: 'echo WSTDIN-MARK\n' },
    ]);
  });

  it('9. streams output that arrives across polls, with one End', async () => {
    const { door, exec, events } = doorIn(environmentId);
    const start = parseReceipt(
      (
        await exec({
          cmd: 'sleep 1 && echo MARKER1 && sleep 1 && echo MARKER2',
          tty: true,
          yield_time_ms: 10,
        })
      ).text,
    );
    expect(start.sessionId).toBe(1000);
    for (const yieldMs of [10, 300, 3000])
      await door.writeStdin({ session_id: 1000, chars: 'x', yield_time_ms: yieldMs }, ctx('w'));
    expect(ofType(events, 'terminal_interaction')).toHaveLength(3);
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    const text = deltaText(events);
    expect(text).toContain('MARKER1');
    expect(text).toContain('MARKER2');
    expect(ofType(events, 'exec_command_end')[0]).toMatchObject({ exit_code: 0 });
  });

  it('10. emits no interaction for an empty poll that finds the process finished', async () => {
    const { door, exec, events } = doorIn(environmentId);
    // Well past the early-exit window and the yield: the poll, not the first call, sees it end.
    await exec({ cmd: 'sleep 1; echo done', yield_time_ms: 250 });
    const poll = parseReceipt(
      (await door.writeStdin({ session_id: 1000, yield_time_ms: 5000 }, ctx('poll'))).text,
    );
    expect(poll).toMatchObject({ exitCode: 0, output: 'done\n' });
    expect(ofType(events, 'terminal_interaction')).toEqual([]);
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    expect(ofType(events, 'exec_command_begin')).toHaveLength(1);
  });

  it('11. reports chunk id, wall time, exit code and the original token count under a tiny budget', async () => {
    const { exec } = doorIn(environmentId);
    const response = await exec({ cmd: 'seq 1 100', max_output_tokens: 6 });
    const receipt = parseReceipt(response.text);
    expect(receipt.chunkId).toMatch(/^[0-9a-f]{6}$/);
    expect(receipt.wallTime).toBeGreaterThanOrEqual(0);
    expect(receipt.exitCode).toBe(0);
    expect(receipt.sessionId).toBeUndefined();
    expect(receipt.output).toContain('tokens truncated');
    expect(receipt.originalTokenCount).toBeGreaterThan(6);
    expect(response.result).toMatchObject({ exit_code: 0, original_token_count: receipt.originalTokenCount });
  });

  it('12. clamps the budget to the turn policy, with the exact truncation shape', async () => {
    const { exec } = doorIn(environmentId, { door: { toolOutputTokenLimit: 50 } });
    const script = "for i in $(seq 1 999); do printf 'line %04d xxxxxxxxxxxxxxxxxxxxxxxxx\\n' $i; done";
    const receipt = parseReceipt((await exec({ cmd: script, max_output_tokens: 70000 })).text);
    expect(receipt.chunkId).toMatch(/^[0-9a-f]{6}$/);
    expect(receipt.originalTokenCount).toBe(8991);
    expect(receipt.output).toMatch(
      /^Total output lines: 999\n\nline 0001 x+\n[\s\S]{64}…8941 tokens truncated…[\s\S]{64}line 0999 x+\n$/,
    );
  });

  it('13. uses pipes by default and a terminal on demand', async () => {
    const { exec } = doorIn(environmentId);
    const pipe = parseReceipt((await exec({ cmd: 'test -t 0 && echo True || echo False' }, ctx('a'))).text);
    expect(pipe).toMatchObject({ exitCode: 0, output: 'False\n' });
    const tty = parseReceipt(
      (await exec({ cmd: 'test -t 0 && echo True || echo False', tty: true }, ctx('b'))).text,
    );
    expect(tty.exitCode).toBe(0);
    expect(tty.output.trim()).toBe('True');
    expect(tty.sessionId).toBeUndefined();
  });

  it('14. returns at once when a command exits early, whatever the yield', async () => {
    const { exec } = doorIn(environmentId);
    // 31415 ms is clamped to the 30 s maximum yield.
    const receipt = parseReceipt((await exec({ cmd: 'sleep 0.05', yield_time_ms: 31415 })).text);
    expect(receipt).toMatchObject({ exitCode: 0, output: '' });
    expect(receipt.sessionId).toBeUndefined();
    // The contract is "at the exit, not at the yield": a door that waited out the yield would report at
    // least 30 s. No bound tighter than the yield itself, which a loaded machine could break. (The test
    // may run past 30 s so that such a door fails here rather than on the test timeout.)
    expect(receipt.wallTime).toBeLessThan(30);
  }, 60_000);

  it('15/17/19. keeps a cat session across writes and clears it on EOF', async () => {
    const { door, exec, events } = doorIn(environmentId);
    const start = parseReceipt((await exec({ cmd: '/bin/cat', tty: true, yield_time_ms: 300 })).text);
    expect(start.sessionId).toBe(1000);
    expect(start.exitCode).toBeUndefined();
    expect(start.output).toBe('');
    const echo = parseReceipt(
      (await door.writeStdin({ session_id: 1000, chars: 'hello\n', yield_time_ms: 500 }, ctx('w1'))).text,
    );
    expect(echo.sessionId).toBe(1000);
    expect(echo.output).toContain('hello');
    const eof = parseReceipt(
      (await door.writeStdin({ session_id: 1000, chars: '\u0004', yield_time_ms: 1000 }, ctx('w2'))).text,
    );
    expect(eof.exitCode).toBe(0);
    expect(eof.sessionId).toBeUndefined();
    expect(eof.chunkId).toMatch(/^[0-9a-f]{6}$/);
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    const again = await door.writeStdin({ session_id: 1000, chars: 'x' }, ctx('w3'));
    expect(again).toMatchObject({
      success: false,
      result: {
        status: 'failed',
        error: { code: 'unknown_session', message: 'write_stdin failed: Unknown process id 1000' },
      },
    });
  });

  it('16. turns Ctrl-C on a pipe session into SIGINT for its group: a trap, then the default', async () => {
    const { door, exec } = doorIn(environmentId);
    const trap = "trap 'echo INT-TRAP; exit 42' INT; echo READY; while true; do sleep 1; done";
    const start = parseReceipt((await exec({ cmd: trap, yield_time_ms: 500 })).text);
    expect(start).toMatchObject({ sessionId: 1000, output: 'READY\n' });
    const stopped = parseReceipt(
      (await door.writeStdin({ session_id: 1000, chars: '\u0003', yield_time_ms: 2000 }, ctx('c'))).text,
    );
    expect(stopped).toMatchObject({ exitCode: 42, output: 'INT-TRAP\n' });
    expect(stopped.sessionId).toBeUndefined();

    const plain = parseReceipt(
      (await exec({ cmd: 'echo READY; exec sleep 30', yield_time_ms: 500 }, ctx('d'))).text,
    );
    expect(plain.sessionId).toBeDefined();
    const killed = parseReceipt(
      (
        await door.writeStdin(
          { session_id: plain.sessionId!, chars: '\u0003', yield_time_ms: 2000 },
          ctx('e'),
        )
      ).text,
    );
    expect(killed.exitCode).toBe(130);
  });

  it('18. survives an interrupt, dies on cleanBackgroundTerminals', async () => {
    const { door, exec, cwd, events } = doorIn(environmentId);
    const pidFile = join(cwd, 'pid');
    const call = exec({ cmd: `printf '%s' $$ > ${pidFile} && exec sleep 3000`, yield_time_ms: 30000 });
    // Started and announced: the call is past its launch and waiting on the yield.
    expect(
      await eventually(
        () => readPid(pidFile) !== undefined && ofType(events, 'exec_command_begin').length === 1,
      ),
    ).toBe(true);
    door.interrupt();
    const response = await call;
    expect(response.aborted).toBe(true);
    expect(response.text).toMatch(
      /^aborted by user after \d+\.\ds; the process is still running with session ID 1000\n/,
    );
    expect(ofType(events, 'turn_aborted')).toEqual([{ type: 'turn_aborted', reason: 'interrupted' }]);
    const pid = readPid(pidFile)!;
    // Instead of a pause: a later command in the same environment, run to its end. A kill the interrupt
    // had set off would have shown by then (a server handles one connection's requests in order).
    const later = parseReceipt((await exec({ cmd: 'echo later' }, ctx('later'))).text);
    expect(later).toMatchObject({ exitCode: 0, output: 'later\n' });
    expect(door.processes()).toEqual([expect.objectContaining({ sessionId: 1000, running: true })]);
    expect(isAlive(pid)).toBe(true);
    await door.cleanBackgroundTerminals();
    expect(await waitUntilDead(pid)).toBe(true);
    const ended = () => ofType(events, 'exec_command_end').filter((event) => event.call_id === 'call-1');
    expect(await eventually(() => ended().length === 1)).toBe(true);
    expect(ended()[0]).toMatchObject({ exit_code: 143, status: 'failed' });
  });

  it('18. is killed by shutdown too, and later calls are refused', async () => {
    const { door, exec, cwd } = doorIn(environmentId);
    const pidFile = join(cwd, 'pid');
    await exec({ cmd: `printf '%s' $$ > ${pidFile} && exec sleep 3000`, yield_time_ms: 300 });
    const pid = readPid(pidFile)!;
    expect(isAlive(pid)).toBe(true);
    await door.shutdown();
    expect(await waitUntilDead(pid)).toBe(true);
    expect(await exec({ cmd: 'true' })).toMatchObject({
      success: false,
      result: { status: 'failed', command: 'true', error: { code: 'session_shut_down' } },
    });
  });

  it('20. returns the tail of a burst bigger than the buffer', async () => {
    const { door, exec } = doorIn(environmentId);
    await exec({
      cmd: 'head -c 160000 /dev/zero | tr "\\0" a; echo; sleep 1; for i in 1 2 3; do echo TAIL-MARKER-$i; done; sleep 1',
      yield_time_ms: 250,
    });
    const poll = parseReceipt(
      (await door.writeStdin({ session_id: 1000, yield_time_ms: 5000 }, ctx('p'))).text,
    );
    expect(poll.output).toContain('TAIL-MARKER-3');
  });

  it('21. times out, then an empty poll ends at the exit with the output', async () => {
    const { door, exec } = doorIn(environmentId);
    const start = parseReceipt((await exec({ cmd: 'sleep 0.5; echo ready', yield_time_ms: 10 })).text);
    expect(start).toMatchObject({ sessionId: 1000, output: '' });
    // An empty poll with the longest yield there is (the 300 s background-terminal ceiling): it can only
    // return within this test's time by ending at the exit.
    const poll = parseReceipt(
      (await door.writeStdin({ session_id: 1000, yield_time_ms: 300_000 }, ctx('p'))).text,
    );
    expect(poll).toMatchObject({ exitCode: 0, output: 'ready\n' });
    expect(poll.wallTime).toBeLessThan(300);
  });

  it('22. summarizes a large output with head and tail', async () => {
    const { exec } = doorIn(environmentId);
    const receipt = parseReceipt(
      (await exec({ cmd: "for i in $(seq 1 5000); do echo 'token token '; done", max_output_tokens: 100 }))
        .text,
    );
    expect(receipt.output).toMatch(
      /^Total output lines: 5000\n\n(token token \n){5,}[\s\S]*…\d+ tokens truncated…[\s\S]*(token token \n){5,}$/,
    );
  });
});

// The local door here has no sandbox backend (makeDoor's registry is empty); in a remote environment
// the server applies the sandbox (the `exec-server` backend of the orchestrator's `environments`).
describe.each<EnvironmentId>(['box', 'dev'])(
  'docs/reference/door.md §15.1: sandboxes applied by the exec-server of %s',
  (environmentId) => {
    const sandboxed = (
      approvalPolicy: 'never' | 'on-failure',
      policy: OrchestratorSettings['policy'],
      ...answers: Parameters<typeof scriptedReviewer>
    ) =>
      doorIn(environmentId, {
        orchestrator: { approvalPolicy, policy, reviewer: scriptedReviewer(...answers) },
      });

    it('23. runs a command under read-only, never', async () => {
      const { exec, events } = sandboxed('never', { type: 'read-only', network_access: false });
      expect(parseReceipt((await exec({ cmd: "echo 'hello'", login: false })).text)).toMatchObject({
        exitCode: 0,
        output: 'hello\n',
      });
      expect(ofType(events, 'exec_command_begin')[0]!.sandbox).toBe('exec-server');
    });

    it('24. hides deny-read globs: the secret is absent, the rest is read', async () => {
      const policy: EffectivePolicy = {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'cwd' }, access: 'write' },
            { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
          ],
        },
        network: 'restricted',
      };
      const { exec, cwd } = sandboxed('never', policy);
      writeFileSync(join(cwd, 'secret.env'), 'API_KEY=super-secret');
      writeFileSync(join(cwd, 'notes.txt'), 'plain notes');
      const receipt = parseReceipt((await exec({ cmd: 'cat notes.txt; cat secret.env', login: false })).text);
      expect(receipt.exitCode).not.toBe(0);
      expect(receipt.output).toContain('plain notes');
      expect(receipt.output).not.toContain('super-secret');
    });

    it('a fast remote denial reaches the retry gates: on-failure asks, and the approved retry runs unsandboxed there', async () => {
      // The denial is judged only when the command ends inside the early-exit window: a 10 s window,
      // not the default 150 ms a loaded machine (and a round trip to the server) can outlast.
      const { exec, cwd, events, reviewer } = doorIn(environmentId, {
        orchestrator: {
          approvalPolicy: 'on-failure',
          policy: { type: 'read-only', network_access: false },
          reviewer: scriptedReviewer({ type: 'approved' }),
        },
        door: { earlyExitWindowMs: 10_000 },
      });
      const receipt = parseReceipt(
        (await exec({ cmd: 'touch created.txt && echo done', login: false })).text,
      );
      expect(receipt).toMatchObject({ exitCode: 0, output: 'done\n' });
      expect(reviewer.requests.map((request) => request.reason)).toEqual([
        'command failed; retry without sandbox?',
      ]);
      expect(existsSync(join(cwd, 'created.txt'))).toBe(true);
      expect(ofType(events, 'exec_command_begin').map((event) => event.sandbox)).toEqual(['none']);
    });
  },
);

describe('a remote environment whose server cannot be started', () => {
  it('is an error the model sees; the command never runs locally', async () => {
    const unreachable = createExecServerSpawner({
      name: 'environment "gone"',
      connect: () =>
        spawnStdioExecServer({ command: '/nonexistent/ux', args: ['exec-server', '--listen', 'stdio'] }),
    });
    try {
      const { door, cwd, events } = makeDoor({
        orchestrator: { environments: { gone: createExecServerSandbox(unreachable) } },
        door: { environments: { gone: { spawner: unreachable } } },
      });
      const marker = join(cwd, 'ran-locally');
      const response = await door.execCommand({ cmd: `touch ${marker}`, environment_id: 'gone' }, ctx());
      expect(response.success).toBe(false);
      expect(response.text).toContain('cannot reach environment "gone"');
      expect(response.text).toContain('the command was not run (ux never runs it locally instead)');
      expect(existsSync(marker)).toBe(false);
      expect(ofType(events, 'exec_command_end')).toMatchObject([
        { status: 'failed', blocked: { status: 'failed' } },
      ]);
    } finally {
      await unreachable.close();
    }
  });
});

function readPid(path: string): number | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    return text ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}
