// Waiting for input: a session whose foreground process is blocked reading its terminal says so, in the
// structured result (`waiting_for_input`) and in the text, and an empty poll returns as soon as that is
// known. Detection reads /proc (Linux); elsewhere the field is absent, which the last test checks.
import { execResultSchema } from '@ux/protocol';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeDoor, parseReceipt, spawner } from '../test/test-support.js';
import { renderResultText } from './render-response.js';
import type { ToolResponse } from './tool-response.js';

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

const linux = process.platform === 'linux';
const ctx = (callId: string) => ({ callId });
/** Far longer than the test may take (20 s): a call that answers did not wait for its deadline. */
const LONG_POLL_MS = 300_000;

function checked(response: ToolResponse): ToolResponse {
  expect(execResultSchema.parse(response.result)).toEqual(response.result);
  expect(response.text).toBe(renderResultText(response.result));
  return response;
}

describe.runIf(linux)('waiting for input (Linux)', () => {
  it('python3 -q on a terminal: the start and an empty long poll answer once the REPL waits, in both forms', async () => {
    const { door } = makeDoor();
    // exec_command's yield is at most 30 s: the answer comes when the prompt is up, with it.
    const started = checked(
      await door.execCommand(
        { cmd: 'python3 -q', tty: true, login: false, yield_time_ms: 30_000 },
        ctx('start'),
      ),
    );
    expect(started.result).toMatchObject({ status: 'running', session_id: 1000, waiting_for_input: true });
    expect(started.result.output).toContain('>>> ');
    const receipt = parseReceipt(started.text);
    expect(receipt).toMatchObject({ sessionId: 1000, waitingForInput: true });
    expect(receipt.nextStep).toContain('waiting for input');
    expect(door.processes()).toMatchObject([{ sessionId: 1000, waitingForInput: true }]);
    expect(door.waitingForInput(1000)).toBe(true);

    // An empty poll whose deadline is minutes away answers now: nothing will come without input.
    const polled = checked(
      await door.writeStdin({ session_id: 1000, chars: '', yield_time_ms: LONG_POLL_MS }, ctx('poll')),
    );
    expect(polled.result).toMatchObject({ status: 'running', session_id: 1000, waiting_for_input: true });
    expect(polled.text).toContain('Process running with session ID 1000\nProcess is waiting for input\n');

    // Typed input: the answer, and the prompt again.
    const typed = checked(
      await door.writeStdin(
        { session_id: 1000, chars: 'print(6*7)\n', yield_time_ms: LONG_POLL_MS },
        ctx('type'),
      ),
    );
    expect(typed.result.output).toContain('42');
    expect(typed.result).toMatchObject({ status: 'running', waiting_for_input: true });

    // Busy in the REPL (a sleep): not waiting; the poll runs to its own deadline.
    const busy = checked(
      await door.writeStdin(
        { session_id: 1000, chars: 'import time; print("busy"); time.sleep(100)\n', yield_time_ms: 1000 },
        ctx('busy'),
      ),
    );
    expect(busy.result.output).toContain('busy');
    expect(busy.result.status).toBe('running');
    expect(busy.result.waiting_for_input).toBeUndefined();
    expect(busy.text).not.toContain('waiting for input');
    expect(door.processes()).toMatchObject([{ sessionId: 1000, waitingForInput: false }]);
  });

  it('sleep 100 on a terminal is running, not waiting; nor is one without a terminal', async () => {
    const { door } = makeDoor();
    for (const [tty, id] of [
      [true, 1000],
      [false, 1001],
    ] as const) {
      const started = checked(
        await door.execCommand(
          { cmd: 'echo ready; sleep 100', tty, login: false, yield_time_ms: 1000 },
          ctx(`s${id}`),
        ),
      );
      expect(started.result).toMatchObject({ status: 'running', session_id: id });
      expect(started.result.output).toContain('ready');
      expect(started.result.waiting_for_input).toBeUndefined();
      expect(parseReceipt(started.text).waitingForInput).toBeUndefined();
      expect(started.result.next_step).toContain('still running');
    }
    expect(door.processes().map((p) => p.waitingForInput)).toEqual([false, false]);
  });

  it('`read x` in bash on a terminal waits; typing a line lets it go on', async () => {
    const { door } = makeDoor();
    const started = checked(
      await door.execCommand(
        {
          cmd: 'read -p "name? " x; echo "hello $x"; sleep 100',
          tty: true,
          login: false,
          yield_time_ms: 30_000,
        },
        ctx('start'),
      ),
    );
    expect(started.result).toMatchObject({ status: 'running', waiting_for_input: true });
    expect(started.result.output).toContain('name? ');
    const answered = checked(
      await door.writeStdin({ session_id: 1000, chars: 'ux\n', yield_time_ms: 500 }, ctx('answer')),
    );
    expect(answered.result.output).toContain('hello ux');
    expect(answered.result.waiting_for_input).toBeUndefined();
  });

  it('without a terminal a command has no stdin: `read x` ends at once, never waiting', async () => {
    const { door } = makeDoor();
    const done = checked(
      await door.execCommand({ cmd: 'read x; echo "read=$?"', login: false, yield_time_ms: 5000 }, ctx('r')),
    );
    expect(done.result).toMatchObject({ status: 'exited', exit_code: 0 });
    expect(done.result.output).toContain('read=1');
    expect(done.result.waiting_for_input).toBeUndefined();
  });
});

describe.runIf(!linux)('waiting for input elsewhere (not Linux)', () => {
  it('is not detected: the field is absent and processes() does not claim it', async () => {
    const { door } = makeDoor();
    const started = await door.execCommand(
      { cmd: 'cat', tty: true, login: false, yield_time_ms: 500 },
      ctx('c'),
    );
    expect(started.result.waiting_for_input).toBeUndefined();
    expect(door.processes()[0]?.waitingForInput).toBeUndefined();
  });
});
