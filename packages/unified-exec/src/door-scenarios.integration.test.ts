// Codex's black-box unified-exec scenarios (spec §11.1) that need no sandbox, with real processes.
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, waitUntilDead } from '@ux/protocol/testing';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { deltaText, eventually, makeDoor, ofType, parseReceipt, sleep, spawner } from './test-support.js';

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

const ctx = (callId = 'call-1') => ({ callId });

describe('§11.1 scenarios', () => {
  it('2. emits Begin with the shell argv and the session cwd', async () => {
    const { door, events, cwd } = makeDoor();
    const response = await door.execCommand({ shell: 'bash', cmd: '/bin/echo hello unified exec' }, ctx());
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
    const { door, events, cwd } = makeDoor();
    mkdirSync(join(cwd, 'sub'));
    const relative = parseReceipt((await door.execCommand({ cmd: 'pwd', workdir: 'sub' }, ctx('a'))).text);
    expect(relative.output).toBe(`${join(cwd, 'sub')}\n`);
    const absolute = parseReceipt((await door.execCommand({ cmd: 'pwd', workdir: '/tmp' }, ctx('b'))).text);
    expect(absolute.output).toBe('/tmp\n');
    expect(ofType(events, 'exec_command_begin').map((event) => event.cwd)).toEqual([
      join(cwd, 'sub'),
      '/tmp',
    ]);
  });

  it('4–5. emits one End with the output of a short command', async () => {
    const { door, events } = makeDoor();
    await door.execCommand({ cmd: "/bin/echo END-EVENT; printf 'HELLO-UEXEC'", yield_time_ms: 250 }, ctx());
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
    const { door, events } = makeDoor();
    const response = parseReceipt(
      (
        await door.execCommand(
          { cmd: "sleep 0.5; printf 'HELLO-FULL-LIFECYCLE'", yield_time_ms: 1000 },
          ctx(),
        )
      ).text,
    );
    expect(response).toMatchObject({ exitCode: 0, output: 'HELLO-FULL-LIFECYCLE' });
    expect(response.sessionId).toBeUndefined();
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    await sleep(200);
    const [end] = ofType(events, 'exec_command_end');
    expect(ofType(events, 'exec_command_end')).toHaveLength(1);
    expect(end).toMatchObject({ process_id: '1000', exit_code: 0 });
    expect(end!.aggregated_output).toContain('HELLO-FULL-LIFECYCLE');
    expect(ofType(events, 'exec_command_begin')[0]!.process_id).toBe('1000');
  });

  it('8. reports a terminal interaction with the original call id and the exact stdin', async () => {
    const { door, events } = makeDoor();
    const start = parseReceipt(
      (await door.execCommand({ cmd: '/bin/bash --norc -i', tty: true, yield_time_ms: 500 }, ctx('exec-1')))
        .text,
    );
    expect(start.sessionId).toBe(1000);
    await door.writeStdin(
      { session_id: 1000, chars: 'echo WSTDIN-MARK\n', yield_time_ms: 500 },
      ctx('write-1'),
    );
    expect(ofType(events, 'terminal_interaction')).toEqual([
      { type: 'terminal_interaction', call_id: 'exec-1', process_id: '1000', stdin: 'echo WSTDIN-MARK\n' },
    ]);
  });

  it('9. streams output that arrives across polls, with one End', async () => {
    const { door, events } = makeDoor();
    const start = parseReceipt(
      (
        await door.execCommand(
          { cmd: 'sleep 1 && echo MARKER1 && sleep 1 && echo MARKER2', tty: true, yield_time_ms: 10 },
          ctx(),
        )
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
    const { door, events } = makeDoor();
    await door.execCommand({ cmd: 'sleep 0.4; echo done', yield_time_ms: 250 }, ctx());
    const poll = parseReceipt(
      (await door.writeStdin({ session_id: 1000, yield_time_ms: 5000 }, ctx('poll'))).text,
    );
    expect(poll).toMatchObject({ exitCode: 0, output: 'done\n' });
    expect(ofType(events, 'terminal_interaction')).toEqual([]);
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    expect(ofType(events, 'exec_command_begin')).toHaveLength(1);
  });

  it('11. reports chunk id, wall time, exit code and the original token count under a tiny budget', async () => {
    const { door } = makeDoor();
    const response = await door.execCommand({ cmd: 'seq 1 100', max_output_tokens: 6 }, ctx());
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
    const { door } = makeDoor({ door: { toolOutputTokenLimit: 50 } });
    const script = "for i in $(seq 1 999); do printf 'line %04d xxxxxxxxxxxxxxxxxxxxxxxxx\\n' $i; done";
    const receipt = parseReceipt(
      (await door.execCommand({ cmd: script, max_output_tokens: 70000 }, ctx())).text,
    );
    expect(receipt.originalTokenCount).toBe(8991);
    expect(receipt.output).toMatch(
      /^Total output lines: 999\n\nline 0001 x+\n[\s\S]{64}…8941 tokens truncated…[\s\S]{64}line 0999 x+\n$/,
    );
  });

  it('13. uses pipes by default and a terminal on demand', async () => {
    const { door } = makeDoor();
    const pipe = parseReceipt(
      (await door.execCommand({ cmd: 'test -t 0 && echo True || echo False' }, ctx('a'))).text,
    );
    expect(pipe).toMatchObject({ exitCode: 0, output: 'False\n' });
    const tty = parseReceipt(
      (await door.execCommand({ cmd: 'test -t 0 && echo True || echo False', tty: true }, ctx('b'))).text,
    );
    expect(tty.exitCode).toBe(0);
    expect(tty.output.trim()).toBe('True');
    expect(tty.sessionId).toBeUndefined();
  });

  it('14. returns at once when a command exits early, whatever the yield', async () => {
    const { door } = makeDoor();
    const receipt = parseReceipt(
      (await door.execCommand({ cmd: 'sleep 0.05', yield_time_ms: 31415 }, ctx())).text,
    );
    expect(receipt).toMatchObject({ exitCode: 0, output: '' });
    expect(receipt.sessionId).toBeUndefined();
    expect(receipt.wallTime).toBeLessThan(0.75);
  });

  it('15/17/19. keeps a cat session across writes and clears it on EOF', async () => {
    const { door, events } = makeDoor();
    const start = parseReceipt(
      (await door.execCommand({ cmd: '/bin/cat', tty: true, yield_time_ms: 300 }, ctx())).text,
    );
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
    expect(again).toMatchObject({ success: false, text: 'write_stdin failed: Unknown process id 1000' });
  });

  it('16. turns Ctrl-C on a pipe session into SIGINT for its group: a trap, then the default', async () => {
    const { door } = makeDoor();
    const trap = "trap 'echo INT-TRAP; exit 42' INT; echo READY; while true; do sleep 1; done";
    const start = parseReceipt((await door.execCommand({ cmd: trap, yield_time_ms: 500 }, ctx())).text);
    expect(start).toMatchObject({ sessionId: 1000, output: 'READY\n' });
    const stopped = parseReceipt(
      (await door.writeStdin({ session_id: 1000, chars: '\u0003', yield_time_ms: 2000 }, ctx('c'))).text,
    );
    expect(stopped).toMatchObject({ exitCode: 42, output: 'INT-TRAP\n' });
    expect(stopped.sessionId).toBeUndefined();

    const plain = parseReceipt(
      (await door.execCommand({ cmd: 'echo READY; exec sleep 30', yield_time_ms: 500 }, ctx('d'))).text,
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
    const { door, cwd, events } = makeDoor();
    const pidFile = join(cwd, 'pid');
    const call = door.execCommand(
      { cmd: `printf '%s' $$ > ${pidFile} && exec sleep 3000`, yield_time_ms: 30000 },
      ctx(),
    );
    expect(await eventually(() => readPid(pidFile) !== undefined)).toBe(true);
    await sleep(200);
    door.interrupt();
    const response = await call;
    expect(response.aborted).toBe(true);
    expect(response.text).toMatch(
      /^aborted by user after \d+\.\ds; the process is still running with session ID 1000$/,
    );
    expect(ofType(events, 'turn_aborted')).toEqual([{ type: 'turn_aborted', reason: 'interrupted' }]);
    const pid = readPid(pidFile)!;
    await sleep(100);
    expect(isAlive(pid)).toBe(true);
    await door.cleanBackgroundTerminals();
    expect(await waitUntilDead(pid)).toBe(true);
    expect(await eventually(() => ofType(events, 'exec_command_end').length === 1)).toBe(true);
    expect(ofType(events, 'exec_command_end')[0]).toMatchObject({ exit_code: 143, status: 'failed' });
  });

  it('18. is killed by shutdown too, and later calls are refused', async () => {
    const { door, cwd } = makeDoor();
    const pidFile = join(cwd, 'pid');
    await door.execCommand(
      { cmd: `printf '%s' $$ > ${pidFile} && exec sleep 3000`, yield_time_ms: 300 },
      ctx(),
    );
    const pid = readPid(pidFile)!;
    expect(isAlive(pid)).toBe(true);
    await door.shutdown();
    expect(await waitUntilDead(pid)).toBe(true);
    expect(await door.execCommand({ cmd: 'true' }, ctx())).toMatchObject({
      success: false,
      text: 'exec_command failed: the session has shut down',
    });
  });

  it('20. returns the tail of a burst bigger than the buffer', async () => {
    const { door } = makeDoor();
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
    const { door } = makeDoor();
    const start = parseReceipt(
      (await door.execCommand({ cmd: 'sleep 0.5; echo ready', yield_time_ms: 10 }, ctx())).text,
    );
    expect(start).toMatchObject({ sessionId: 1000, output: '' });
    const began = Date.now();
    const poll = parseReceipt(
      (await door.writeStdin({ session_id: 1000, yield_time_ms: 800 }, ctx('p'))).text,
    );
    expect(poll).toMatchObject({ exitCode: 0, output: 'ready\n' });
    expect(Date.now() - began).toBeLessThan(4000);
  });

  it('22. summarizes a large output with head and tail', async () => {
    const { door } = makeDoor();
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

function readPid(path: string): number | undefined {
  try {
    const text = readFileSync(path, 'utf8');
    return text ? Number(text) : undefined;
  } catch {
    return undefined;
  }
}
