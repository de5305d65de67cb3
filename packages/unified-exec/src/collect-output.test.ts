import type { ExecProcess, ExitStatus } from '@ux/protocol/core';
import { OutputTracker } from '@ux/spawn';
import { describe, expect, it } from 'vitest';
import { collectOutput, POST_EXIT_CLOSE_WAIT_CAP_MS } from './collect-output.js';
import { PauseState } from './pause-state.js';

/** A process whose output, exit and close the test drives; nothing is started. */
function fakeProcess() {
  const listeners = new Set<(chunk: Uint8Array) => void>();
  let status: ExitStatus | undefined;
  let exit!: (status: ExitStatus) => void;
  let close!: () => void;
  const process: ExecProcess = {
    pid: undefined,
    tty: false,
    onOutput(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    write: async () => {},
    interrupt: async () => {},
    terminate: async () => {},
    exited: new Promise((resolve) => {
      exit = resolve;
    }),
    closed: new Promise((resolve) => {
      close = resolve;
    }),
    exitStatus: () => status,
  };
  return {
    process,
    print: (text: string) => {
      for (const listener of listeners) listener(Buffer.from(text));
    },
    exit: (exitCode: number) => {
      status = { exitCode };
      exit(status);
    },
    close: () => close(),
  };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('collectOutput', () => {
  it('reads the output that comes just after an exit seen at the deadline (the caller reports that exit)', async () => {
    // An exit and its command's last bytes arrive in the same turn of the event loop, the exit first;
    // on a busy host that turn can come after the deadline. The call then reports the exit and forgets
    // the process: a wait that ended at the deadline lost the last line for good.
    const child = fakeProcess();
    const tracker = new OutputTracker(child.process);
    child.print('first\n');
    child.exit(0);
    await tick();
    const collecting = collectOutput(child.process, tracker, Date.now(), new PauseState());
    setImmediate(() => {
      child.print('last\n');
      child.close();
    });
    const { output, aborted } = await collecting;
    expect(aborted).toBe(false);
    expect(output.text()).toBe('first\nlast\n');
    expect(tracker.outputClosed).toBe(true);
  });

  it('reads output that the event loop gets to only after the post-exit window has run out', async () => {
    // On a busy host the window's timer runs in the same turn as output already waiting in the pipe,
    // and timers run before the loop polls for I/O: the wait looks once more before it ends. Here the
    // output comes from an immediate queued by a timer that runs right after the window's own.
    const child = fakeProcess();
    const tracker = new OutputTracker(child.process);
    child.exit(0);
    await tick();
    const collecting = collectOutput(child.process, tracker, Date.now() + 60_000, new PauseState());
    setTimeout(
      () =>
        setImmediate(() => {
          child.print('last\n');
          child.close();
        }),
      POST_EXIT_CLOSE_WAIT_CAP_MS,
    );
    // Both timers are due when the loop next runs its timers, the window's first.
    const busyUntil = Date.now() + POST_EXIT_CLOSE_WAIT_CAP_MS + 10;
    while (Date.now() < busyUntil);
    const { output } = await collecting;
    expect(output.text()).toBe('last\n');
  });

  it('ends the wait after an exit even when something else keeps the output open', async () => {
    // `cmd &` left running holds the pipe: the exit is reported without waiting for the deadline (a
    // minute here, beyond the test's own timeout).
    const child = fakeProcess();
    const tracker = new OutputTracker(child.process);
    const collecting = collectOutput(child.process, tracker, Date.now() + 60_000, new PauseState());
    child.print('started\n');
    child.exit(0);
    const { output } = await collecting;
    expect(output.text()).toBe('started\n');
    expect(tracker.outputClosed).toBe(false);
  });

  it('ends at the deadline while the process runs, with what it printed so far', async () => {
    const child = fakeProcess();
    const tracker = new OutputTracker(child.process);
    child.print('so far\n');
    const { output } = await collectOutput(child.process, tracker, Date.now() + 20, new PauseState());
    expect(output.text()).toBe('so far\n');
    expect(child.process.exitStatus()).toBeUndefined();
  });
});

describe('collectOutput and a process waiting for input', () => {
  it('ends a wait far from its deadline once the process waits for input and its output is quiet', async () => {
    const child = fakeProcess();
    let asked = 0;
    let waiting = false;
    child.process.waitingForInput = () => {
      asked += 1;
      return waiting;
    };
    const tracker = new OutputTracker(child.process);
    // A deadline an hour away: only the process's answer can end this wait within the test.
    const collecting = collectOutput(child.process, tracker, Date.now() + 3_600_000, new PauseState());
    child.print('>>> ');
    waiting = true;
    const result = await collecting;
    expect(result).toMatchObject({ aborted: false, waitingForInput: true });
    expect(result.output.text()).toBe('>>> ');
    expect(asked).toBeGreaterThan(0);
  });

  it('never asks a process that cannot tell, and reports nothing about input', async () => {
    const child = fakeProcess();
    const tracker = new OutputTracker(child.process);
    const result = await collectOutput(child.process, tracker, Date.now() + 300, new PauseState());
    expect(result.waitingForInput).toBeUndefined();
  });

  it('a process that is not waiting runs to the deadline: the wait ends without the flag', async () => {
    const child = fakeProcess();
    let asked = 0;
    child.process.waitingForInput = () => {
      asked += 1;
      return false;
    };
    const tracker = new OutputTracker(child.process);
    const result = await collectOutput(child.process, tracker, Date.now() + 700, new PauseState());
    expect(result.waitingForInput).toBeUndefined();
    expect(asked).toBeGreaterThan(0);
  });
});
