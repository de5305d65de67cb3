// Codex's unified-exec scenarios (spec §11.1) through the remote path: the door's commands run in a
// configured remote environment, on ux's exec-server started as a real child process over stdio, and
// sandboxes are applied by that server (bubblewrap). Scenarios 1 (apply_patch), 7 (managed network),
// 25 (macOS) and 26 (ignored upstream) do not apply to this path.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { OrchestratorSettings } from '@ux/orchestrator';
import { createSandboxRegistry, type EffectivePolicy } from '@ux/protocol';
import { isAlive, waitUntilDead } from '@ux/protocol/testing';
import {
  createExecServerSandbox,
  createExecServerSpawner,
  createLocalSpawner,
  createSpawnRouter,
  routeToEnvironment,
  spawnStdioExecServer,
} from '@ux/spawn';
import { useLeakCheck } from '@ux/test-utils';
import { afterAll, describe, expect, it } from 'vitest';
import {
  type DoorOptions,
  deltaText,
  eventually,
  makeDoor,
  ofType,
  parseReceipt,
  scriptedReviewer,
  sleep,
} from './test-support.js';

const SERVER_BIN = join(
  dirname(fileURLToPath(import.meta.url)),
  '../../exec-server/dist/testing/exec-server-bin.js',
);

useLeakCheck(5_000);

// One remote environment for the file, as a session would configure it: every command goes there.
const remote = createExecServerSpawner({
  name: 'remote environment "box"',
  connect: () => spawnStdioExecServer({ command: process.execPath, args: [SERVER_BIN, '--listen', 'stdio'] }),
});
const local = createLocalSpawner();
const inBox = routeToEnvironment(createSpawnRouter({ local, execServer: remote }), 'box');
afterAll(() => remote.close());

const remoteDoor = (options: DoorOptions = {}) =>
  makeDoor({ ...options, door: { spawner: inBox, ...options.door } });
const ctx = (callId = 'call-1') => ({ callId });

function readPid(path: string): number | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    return text ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}

describe('§11.1 through a remote environment', () => {
  it('2. emits Begin with the shell argv and the session cwd', async () => {
    const { door, events, cwd } = remoteDoor();
    const response = await door.execCommand({ shell: 'bash', cmd: '/bin/echo hello unified exec' }, ctx());
    expect(parseReceipt(response.text)).toMatchObject({ exitCode: 0, output: 'hello unified exec\n' });
    expect(ofType(events, 'exec_command_begin')).toEqual([
      expect.objectContaining({
        command: ['bash', '-lc', '/bin/echo hello unified exec'],
        cwd,
        sandbox: 'none',
      }),
    ]);
  });

  it('runs on the exec-server: the shell is a child of the server process, not of this one', async () => {
    const { door } = remoteDoor();
    const receipt = parseReceipt(
      (await door.execCommand({ cmd: "tr '\\0' ' ' < /proc/$PPID/cmdline" }, ctx())).text,
    );
    expect(receipt.output).toContain('exec-server-bin.js --listen stdio');
  });

  it('3. resolves relative and absolute workdirs', async () => {
    const { door, cwd } = remoteDoor();
    mkdirSync(join(cwd, 'sub'));
    expect(parseReceipt((await door.execCommand({ cmd: 'pwd', workdir: 'sub' }, ctx('a'))).text).output).toBe(
      `${join(cwd, 'sub')}\n`,
    );
    expect(
      parseReceipt((await door.execCommand({ cmd: 'pwd', workdir: '/tmp' }, ctx('b'))).text).output,
    ).toBe('/tmp\n');
  });

  it('4–5. emits one End with the output of a short command', async () => {
    const { door, events } = remoteDoor();
    await door.execCommand({ cmd: "/bin/echo END-EVENT; printf 'HELLO-UEXEC'", yield_time_ms: 250 }, ctx());
    const ends = ofType(events, 'exec_command_end');
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ exit_code: 0, status: 'completed' });
    expect(ends[0]!.aggregated_output).toContain('END-EVENT');
    expect(ends[0]!.stdout).toContain('HELLO-UEXEC');
  });

  it('6. gives a longer command exactly one End, from the exit watcher', async () => {
    const { door, events } = remoteDoor();
    const response = parseReceipt(
      (
        await door.execCommand(
          { cmd: "sleep 0.5; printf 'HELLO-FULL-LIFECYCLE'", yield_time_ms: 1000 },
          ctx(),
        )
      ).text,
    );
    expect(response).toMatchObject({ exitCode: 0, output: 'HELLO-FULL-LIFECYCLE' });
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    await sleep(200);
    expect(ofType(events, 'exec_command_end')).toHaveLength(1);
  });

  it('8. reports a terminal interaction with the original call id and the exact stdin', async () => {
    const { door, events } = remoteDoor();
    const start = parseReceipt(
      (await door.execCommand({ cmd: '/bin/bash --norc -i', tty: true, yield_time_ms: 500 }, ctx('exec-1')))
        .text,
    );
    expect(start.sessionId).toBe(1000);
    const reply = parseReceipt(
      (await door.writeStdin({ session_id: 1000, chars: 'echo WSTDIN-MARK\n', yield_time_ms: 500 }, ctx('w')))
        .text,
    );
    expect(reply.output).toContain('WSTDIN-MARK');
    expect(ofType(events, 'terminal_interaction')).toEqual([
      { type: 'terminal_interaction', call_id: 'exec-1', process_id: '1000', stdin: 'echo WSTDIN-MARK\n' },
    ]);
  });

  it('9. streams output that arrives across polls, with one End', async () => {
    const { door, events } = remoteDoor();
    await door.execCommand(
      { cmd: 'sleep 1 && echo MARKER1 && sleep 1 && echo MARKER2', tty: true, yield_time_ms: 10 },
      ctx(),
    );
    for (const yieldMs of [10, 300, 3000])
      await door.writeStdin({ session_id: 1000, chars: 'x', yield_time_ms: yieldMs }, ctx('w'));
    expect(ofType(events, 'terminal_interaction')).toHaveLength(3);
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    expect(deltaText(events)).toContain('MARKER1');
    expect(deltaText(events)).toContain('MARKER2');
  });

  it('10. emits no interaction for an empty poll that finds the process finished', async () => {
    const { door, events } = remoteDoor();
    await door.execCommand({ cmd: 'sleep 0.4; echo done', yield_time_ms: 250 }, ctx());
    const poll = parseReceipt(
      (await door.writeStdin({ session_id: 1000, yield_time_ms: 5000 }, ctx('poll'))).text,
    );
    expect(poll).toMatchObject({ exitCode: 0, output: 'done\n' });
    expect(ofType(events, 'terminal_interaction')).toEqual([]);
  });

  it('11–12. truncates under a token budget with the exact shape', async () => {
    const { door } = remoteDoor({ door: { toolOutputTokenLimit: 50 } });
    const script = "for i in $(seq 1 999); do printf 'line %04d xxxxxxxxxxxxxxxxxxxxxxxxx\\n' $i; done";
    const receipt = parseReceipt(
      (await door.execCommand({ cmd: script, max_output_tokens: 70000 }, ctx())).text,
    );
    expect(receipt.chunkId).toMatch(/^[0-9a-f]{6}$/);
    expect(receipt.originalTokenCount).toBe(8991);
    expect(receipt.output).toMatch(
      /^Total output lines: 999\n\nline 0001 x+\n[\s\S]{64}…8941 tokens truncated…[\s\S]{64}line 0999 x+\n$/,
    );
  });

  it('13. uses pipes by default and a terminal on demand', async () => {
    const { door } = remoteDoor();
    const cmd = 'test -t 0 && echo True || echo False';
    expect(parseReceipt((await door.execCommand({ cmd }, ctx('a'))).text)).toMatchObject({
      exitCode: 0,
      output: 'False\n',
    });
    expect(parseReceipt((await door.execCommand({ cmd, tty: true }, ctx('b'))).text).output.trim()).toBe(
      'True',
    );
  });

  it('14. returns at once when a command exits early, whatever the yield', async () => {
    const { door } = remoteDoor();
    const receipt = parseReceipt(
      (await door.execCommand({ cmd: 'sleep 0.05', yield_time_ms: 31415 }, ctx())).text,
    );
    expect(receipt).toMatchObject({ exitCode: 0, output: '' });
    expect(receipt.sessionId).toBeUndefined();
    expect(receipt.wallTime).toBeLessThan(0.75);
  });

  it('15/17/19. keeps a cat session across writes and clears it on EOF', async () => {
    const { door, events } = remoteDoor();
    const start = parseReceipt(
      (await door.execCommand({ cmd: '/bin/cat', tty: true, yield_time_ms: 300 }, ctx())).text,
    );
    expect(start).toMatchObject({ sessionId: 1000, output: '' });
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
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    expect(await door.writeStdin({ session_id: 1000, chars: 'x' }, ctx('w3'))).toMatchObject({
      success: false,
      text: 'write_stdin failed: Unknown process id 1000',
    });
  });

  it('16. turns Ctrl-C on a pipe session into SIGINT for its group: a trap, then the default', async () => {
    const { door } = remoteDoor();
    const trap = "trap 'echo INT-TRAP; exit 42' INT; echo READY; while true; do sleep 1; done";
    expect(
      parseReceipt((await door.execCommand({ cmd: trap, yield_time_ms: 500 }, ctx())).text),
    ).toMatchObject({
      sessionId: 1000,
      output: 'READY\n',
    });
    const stopped = parseReceipt(
      (await door.writeStdin({ session_id: 1000, chars: '\u0003', yield_time_ms: 2000 }, ctx('c'))).text,
    );
    expect(stopped).toMatchObject({ exitCode: 42, output: 'INT-TRAP\n' });
    const plain = parseReceipt(
      (await door.execCommand({ cmd: 'echo READY; exec sleep 30', yield_time_ms: 500 }, ctx('d'))).text,
    );
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
    const { door, cwd, events } = remoteDoor();
    const pidFile = join(cwd, 'pid');
    const call = door.execCommand(
      { cmd: `printf '%s' $$ > ${pidFile} && exec sleep 3000`, yield_time_ms: 30000 },
      ctx(),
    );
    expect(await eventually(() => readPid(pidFile) !== undefined)).toBe(true);
    await sleep(200);
    door.interrupt();
    expect((await call).aborted).toBe(true);
    const pid = readPid(pidFile)!;
    await sleep(100);
    expect(isAlive(pid)).toBe(true);
    await door.cleanBackgroundTerminals();
    expect(await waitUntilDead(pid)).toBe(true);
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    expect(ofType(events, 'exec_command_end')[0]).toMatchObject({ exit_code: 143, status: 'failed' });
  });

  it('18. is killed by shutdown too', async () => {
    const { door, cwd } = remoteDoor();
    const pidFile = join(cwd, 'pid');
    await door.execCommand(
      { cmd: `printf '%s' $$ > ${pidFile} && exec sleep 3000`, yield_time_ms: 300 },
      ctx(),
    );
    const pid = readPid(pidFile)!;
    expect(isAlive(pid)).toBe(true);
    await door.shutdown();
    expect(await waitUntilDead(pid)).toBe(true);
  });

  it('20. returns the tail of a burst bigger than the buffer', async () => {
    const { door } = remoteDoor();
    await door.execCommand(
      {
        cmd: 'head -c 160000 /dev/zero | tr "\\0" a; echo; sleep 1; for i in 1 2 3; do echo TAIL-MARKER-$i; done; sleep 1',
        yield_time_ms: 250,
      },
      ctx(),
    );
    const poll = parseReceipt(
      (await door.writeStdin({ session_id: 1000, yield_time_ms: 5000 }, ctx('p'))).text,
    );
    expect(poll.output).toContain('TAIL-MARKER-3');
  });

  it('21. times out, then an empty poll ends at the exit with the output', async () => {
    const { door } = remoteDoor();
    expect(
      parseReceipt((await door.execCommand({ cmd: 'sleep 0.5; echo ready', yield_time_ms: 10 }, ctx())).text),
    ).toMatchObject({
      sessionId: 1000,
      output: '',
    });
    expect(
      parseReceipt((await door.writeStdin({ session_id: 1000, yield_time_ms: 800 }, ctx('p'))).text),
    ).toMatchObject({
      exitCode: 0,
      output: 'ready\n',
    });
  });

  it('22. summarizes a large output with head and tail', async () => {
    const { door } = remoteDoor();
    const receipt = parseReceipt(
      (
        await door.execCommand(
          { cmd: "for i in $(seq 1 5000); do echo 'token token '; done", max_output_tokens: 100 },
          ctx(),
        )
      ).text,
    );
    expect(receipt.output).toMatch(
      /^Total output lines: 5000\n\n(token token \n){5,}[\s\S]*…\d+ tokens truncated…[\s\S]*(token token \n){5,}$/,
    );
  });
});

describe('§11.1 sandboxes applied by the exec-server', () => {
  const sandboxed = (
    approvalPolicy: 'never' | 'on-failure',
    policy: OrchestratorSettings['policy'],
    ...answers: Parameters<typeof scriptedReviewer>
  ) =>
    remoteDoor({
      orchestrator: {
        sandboxRegistry: createSandboxRegistry({ 'exec-server': createExecServerSandbox(remote) }),
        approvalPolicy,
        policy,
        reviewer: scriptedReviewer(...answers),
      },
    });

  it('23. runs a command under read-only, never', async () => {
    const { door, events } = sandboxed('never', { type: 'read-only', network_access: false });
    expect(
      parseReceipt((await door.execCommand({ cmd: "echo 'hello'", login: false }, ctx())).text),
    ).toMatchObject({
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
    const { door, cwd } = sandboxed('never', policy);
    writeFileSync(join(cwd, 'secret.env'), 'API_KEY=super-secret');
    writeFileSync(join(cwd, 'notes.txt'), 'plain notes');
    const receipt = parseReceipt(
      (await door.execCommand({ cmd: 'cat notes.txt; cat secret.env', login: false }, ctx())).text,
    );
    expect(receipt.exitCode).not.toBe(0);
    expect(receipt.output).toContain('plain notes');
    expect(receipt.output).not.toContain('super-secret');
  });

  it('a fast remote denial reaches the retry gates: on-failure asks, and the approved retry runs unsandboxed there', async () => {
    const { door, cwd, events, reviewer } = sandboxed(
      'on-failure',
      { type: 'read-only', network_access: false },
      { type: 'approved' },
    );
    const receipt = parseReceipt(
      (await door.execCommand({ cmd: 'touch created.txt && echo done', login: false }, ctx())).text,
    );
    expect(receipt).toMatchObject({ exitCode: 0, output: 'done\n' });
    expect(reviewer.requests.map((request) => request.reason)).toEqual([
      'command failed; retry without sandbox?',
    ]);
    expect(existsSync(join(cwd, 'created.txt'))).toBe(true);
    expect(ofType(events, 'exec_command_begin').map((event) => event.sandbox)).toEqual(['none']);
  });
});

describe('a remote environment that cannot be reached', () => {
  it('is an error the model sees; the command never runs locally', async () => {
    const unreachable = createExecServerSpawner({
      name: 'remote environment "gone"',
      connect: () =>
        spawnStdioExecServer({ command: '/nonexistent/ux', args: ['exec-server', '--listen', 'stdio'] }),
    });
    const starter = routeToEnvironment(createSpawnRouter({ local, execServer: unreachable }), 'gone');
    const { door, cwd, events } = makeDoor({ door: { spawner: starter } });
    const marker = join(cwd, 'ran-locally');
    const response = await door.execCommand({ cmd: `touch ${marker}` }, ctx());
    expect(response.success).toBe(false);
    expect(response.text).toContain('cannot reach remote environment "gone"');
    expect(response.text).toContain('the command was not run (ux never runs it locally instead)');
    expect(existsSync(marker)).toBe(false);
    expect(events).toEqual([]);
  });
});
