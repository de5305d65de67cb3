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
 * (at most 50 ms after the exit). Output arriving early does not end the wait (spec §3.7). While the
 * session is paused the clocks stop. An aborted signal ends the wait at once; the process is untouched.
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
  // One listener each per call, not per loop turn: a long wait over a chatty process loops often.
  let onAbort: (() => void) | undefined;
  const abort = new Promise<'abort'>((resolve) => {
    if (signal?.aborted) resolve('abort');
    onAbort = () => resolve('abort');
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  const exited = process.exited.then(() => 'event' as const);
  let pauseChange = pause.changed().then(() => 'pause' as const);
  try {
    for (;;) {
      if (signal?.aborted) return { output, aborted: true };
      if (pause.isPaused) {
        const started = Date.now();
        if ((await Promise.race([pauseChange, abort])) === 'pause')
          pauseChange = pause.changed().then(() => 'pause');
        const pausedFor = Date.now() - started;
        end += pausedFor;
        if (postExitDeadline !== undefined) postExitDeadline += pausedFor;
        continue;
      }
      const drained = tracker.buffer.drainChunks();
      if (drained.length > 0) {
        for (const chunk of drained) output.push(chunk);
        exitSeen ||= process.exitStatus() !== undefined;
        if (Date.now() >= end) break;
        continue;
      }
      exitSeen ||= process.exitStatus() !== undefined;
      if (exitSeen && tracker.outputClosed) break;
      const now = Date.now();
      const remaining = end - now;
      if (remaining <= 0) break;
      let wake: Promise<unknown> = tracker.nextChange().then(() => 'event' as const);
      let ms = remaining;
      if (exitSeen) {
        postExitDeadline ??= now + Math.min(remaining, POST_EXIT_CLOSE_WAIT_CAP_MS);
        ms = postExitDeadline - now;
      } else {
        wake = Promise.race([wake, exited]);
      }
      const woke = await timed(Promise.race([wake, pauseChange, abort]), ms);
      if (woke === 'pause') pauseChange = pause.changed().then(() => 'pause');
      if (woke === 'timeout') break;
    }
    return { output, aborted: false };
  } finally {
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}

async function timed<T>(promise: Promise<T>, ms: number): Promise<T | 'timeout'> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), Math.max(0, ms));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
