import type { ExecProcess } from '@ux/protocol/core';
import type { OutputTracker } from '@ux/spawn';
import { CollectedOutput } from './collected-output.js';
import type { PauseState } from './pause-state.js';

/** After the process has exited, how long to wait at most for its output to close. */
export const POST_EXIT_CLOSE_WAIT_CAP_MS = 50;

export interface CollectResult {
  output: CollectedOutput;
  /** The wait was cut short by the caller's signal (an interrupt). */
  aborted: boolean;
}

/**
 * Drains a process's buffer until the deadline, or until the process has exited and its output closed
 * (at most 50 ms after the exit). Output arriving early does not end the wait (docs/reference/door.md §6). While the
 * session is paused the clocks stop. An aborted signal ends the wait at once; the process is untouched.
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
  let end = deadline;
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
      if (drained.head.length > 0 || drained.tail.length > 0 || drained.omittedBytes > 0) {
        // What the process's buffer dropped between two polls is counted and marked, not lost silently.
        output.pushParts(drained);
        exitSeen ||= process.exitStatus() !== undefined;
        if (Date.now() >= end) break;
        continue;
      }
      exitSeen ||= process.exitStatus() !== undefined;
      if (exitSeen && tracker.outputClosed) break;
      const now = Date.now();
      const remaining = end - now;
      if (remaining <= 0) break;
      let ms = remaining;
      if (exitSeen) {
        postExitDeadline ??= now + Math.min(remaining, POST_EXIT_CLOSE_WAIT_CAP_MS);
        ms = postExitDeadline - now;
      }
      if ((await waitFor(ms)) === 'timeout') break;
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

/** While paused, how often the wait looks again (a change of the flag wakes it sooner). */
const PAUSE_RECHECK_MS = 60_000;
