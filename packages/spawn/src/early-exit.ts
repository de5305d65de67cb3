import type { ExecProcess, ExitStatus } from '@ux/protocol/core';
import type { OutputTracker } from './output-tracker.js';
import { EARLY_EXIT_GRACE_PERIOD_MS, EARLY_EXIT_OUTPUT_SETTLE_MS } from './spawn-constants.js';

export type EarlyExit =
  | { exited: false }
  | {
      exited: true;
      status: ExitStatus;
      /** A copy of the retained output; the buffer is left as it was. */
      output: Uint8Array;
    };

/**
 * The window in which an exit may be a sandbox denial: waits up to 150 ms for the process to exit;
 * if it did, waits up to 20 ms more for one more piece of output (unless the output already closed)
 * and returns a snapshot of what was retained.
 *
 * The window's timer can fire before an exit that has already happened is seen: when the event loop
 * stalls (a grammar compiled on first use, a large JSON parse), the expired timer runs before the
 * I/O phase that would deliver the exit. So when the timer wins, pending I/O gets one turn of the loop
 * before the verdict: a process that had exited by then still counts as an early exit.
 *
 * An aborted `signal` (the call was interrupted, or the session is shutting down) ends the wait at once,
 * as if the window had passed: the caller gets its live process back to keep or to end.
 */
export async function waitForEarlyExit(
  process: ExecProcess,
  tracker: OutputTracker,
  options: { graceMs?: number; settleMs?: number; signal?: AbortSignal } = {},
): Promise<EarlyExit> {
  const status =
    process.exitStatus() ??
    (await raceTimeout(process.exited, options.graceMs ?? EARLY_EXIT_GRACE_PERIOD_MS, options.signal)) ??
    (await afterPendingEvents(process));
  if (!status) return { exited: false };
  if (!tracker.outputClosed)
    await raceTimeout(tracker.nextChange(), options.settleMs ?? EARLY_EXIT_OUTPUT_SETTLE_MS);
  return { exited: true, status, output: tracker.buffer.snapshot() };
}

/** Lets the loop's I/O phase run once (exit notifications, output), then reads the exit status. */
async function afterPendingEvents(process: ExecProcess): Promise<ExitStatus | undefined> {
  await new Promise((resolve) => setImmediate(resolve));
  return process.exitStatus();
}

async function raceTimeout<T>(promise: Promise<T>, ms: number, signal?: AbortSignal): Promise<T | undefined> {
  if (signal?.aborted) return undefined;
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<undefined>((resolve) => {
        timer = setTimeout(() => resolve(undefined), ms);
        onAbort = () => resolve(undefined);
        signal?.addEventListener('abort', onAbort, { once: true });
      }),
    ]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  }
}
