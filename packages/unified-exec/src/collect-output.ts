import type { ExecProcess } from '@ux/protocol/core';
import type { OutputTracker } from '@ux/spawn';
import { CollectedOutput } from './collected-output.js';
import type { PauseState } from './pause-state.js';

/** After the process has exited, how long to wait at most for its output to close. */
export const POST_EXIT_CLOSE_WAIT_CAP_MS = 50;

/** While a call waits on a running process that can tell, how often it asks whether it waits for input. */
export const INPUT_WAIT_PROBE_MS = 250;
/** How long output must have been quiet before a process waiting for input ends the wait. */
export const INPUT_WAIT_SETTLE_MS = 150;

export interface CollectResult {
  output: CollectedOutput;
  /** The wait was cut short by the caller's signal (an interrupt). */
  aborted: boolean;
  /** The wait ended before its deadline because the process is waiting for input. */
  waitingForInput?: boolean;
}

/**
 * Drains a process's buffer until the deadline, or until the process has exited and its output closed
 * (at most 50 ms after the exit). Output arriving early does not end the wait (docs/reference/door.md §6). While the
 * session is paused the clocks stop. An aborted signal ends the wait at once; the process is untouched.
 *
 * Once the exit has been seen, the deadline no longer ends the wait: only the close or the 50 ms after
 * the exit do. The caller reports that exit and forgets the process, so whatever output is still on its
 * way would be lost for good; and it is on its way in the usual case: the exit and the last bytes come
 * in the same turn of the event loop, the exit first, so an exit seen at or past the deadline (a busy
 * host, a command that ends just as the wait does) found its last output not read yet.
 *
 * A process that can tell whether it waits for input (`ExecProcess.waitingForInput`, Linux) is asked
 * every 250 ms while the wait lasts; once it waits for input and its output has been quiet for 150 ms
 * (its prompt has arrived), the wait ends early with `waitingForInput` set: a poll of a REPL or of a
 * question returns as soon as that is known instead of at its deadline. Nothing is asked otherwise.
 *
 * It waits on listeners registered once per call (output, exit, pause, abort) and a timer per turn:
 * racing promises that stay pending for the life of the process or the session, once per turn of a
 * loop over a chatty process, left a reaction behind on them each turn, which no one ever freed.
 */
export async function collectOutput(
  process: ExecProcess,
  tracker: OutputTracker,
  deadline: number,
  pause: PauseState,
  signal?: AbortSignal,
): Promise<CollectResult> {
  const output = new CollectedOutput();
  let exitSeen = process.exitStatus() !== undefined;
  let postExitDeadline: number | undefined;
  let lastLook = false;
  let end = deadline;
  const probe = process.waitingForInput?.bind(process);
  let nextProbeAt = Date.now() + INPUT_WAIT_PROBE_MS;
  let lastOutputAt = 0;
  let wakeUp: ((why: Wake) => void) | undefined;
  const wake = (why: Wake) => {
    const resolve = wakeUp;
    wakeUp = undefined;
    resolve?.(why);
  };
  const onAbort = () => wake('abort');
  signal?.addEventListener('abort', onAbort, { once: true });
  const offPause = pause.onChange(() => wake('pause'));
  const offTracker = tracker.onChange(() => wake('event'));
  // Waits until something changes or `ms` pass. The caller checked every condition in the same turn,
  // so nothing that happens before the wait begins can be missed.
  const waitFor = (ms: number) =>
    new Promise<Wake>((resolve) => {
      const timer = setTimeout(() => wake('timeout'), Math.max(0, ms));
      wakeUp = (why) => {
        clearTimeout(timer);
        resolve(why);
      };
    });
  try {
    for (;;) {
      if (signal?.aborted) return { output, aborted: true };
      if (pause.isPaused) {
        const started = Date.now();
        while (pause.isPaused && !signal?.aborted) await waitFor(PAUSE_RECHECK_MS);
        const pausedFor = Date.now() - started;
        end += pausedFor;
        if (postExitDeadline !== undefined) postExitDeadline += pausedFor;
        continue;
      }
      const drained = tracker.buffer.drainParts();
      const got = drained.head.length > 0 || drained.tail.length > 0 || drained.omittedBytes > 0;
      // What the process's buffer dropped between two polls is counted and marked, not lost silently.
      if (got) output.pushParts(drained);
      exitSeen ||= process.exitStatus() !== undefined;
      if (exitSeen && tracker.outputClosed) break;
      const now = Date.now();
      if (got) lastOutputAt = now;
      let ms: number;
      // How long to sleep: until the deadline, or the next question to the process if sooner.
      let sleepMs: number;
      if (exitSeen) {
        postExitDeadline ??= now + POST_EXIT_CLOSE_WAIT_CAP_MS;
        ms = postExitDeadline - now;
        sleepMs = ms;
      } else {
        ms = end - now;
        sleepMs = ms;
        if (probe && ms > 0) {
          if (now >= nextProbeAt) {
            const quietAt = lastOutputAt + INPUT_WAIT_SETTLE_MS;
            if (probe() === true) {
              // Waiting: end once the output has been quiet a moment; ask again then.
              if (now >= quietAt) return { output, aborted: false, waitingForInput: true };
              nextProbeAt = quietAt;
            } else nextProbeAt = now + INPUT_WAIT_PROBE_MS;
          }
          sleepMs = Math.min(ms, Math.max(1, nextProbeAt - now));
        }
      }
      if (ms <= 0) {
        if (!exitSeen || lastLook) break;
        // Timers run before the event loop polls for I/O, so on a busy host the window can close in
        // the same turn as output already waiting in the pipe: one more turn to read it.
        lastLook = true;
        await ioTurn();
        continue;
      }
      if (got) continue;
      await waitFor(sleepMs);
    }
    return { output, aborted: false };
  } finally {
    wakeUp = undefined;
    offPause();
    offTracker();
    signal?.removeEventListener('abort', onAbort);
  }
}

type Wake = 'event' | 'pause' | 'abort' | 'timeout';

/** Resolves after the event loop has polled for I/O at least once (an immediate runs after the poll). */
const ioTurn = () => new Promise<void>((resolve) => setImmediate(() => setImmediate(resolve)));

/** While paused, how often the wait looks again (a change of the flag wakes it sooner). */
const PAUSE_RECHECK_MS = 60_000;
