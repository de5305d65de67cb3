import type { Entry } from './door-context.js';

/** What `watchSession` reports about one session. */
export interface SessionWatcher {
  /** Output as it comes (whole characters), from the moment of the call on. */
  output(chunk: Uint8Array): void;
  /** The session's process ended and its output was read to the end. */
  exit(exitCode: number): void;
}

/**
 * Watches one stored session's output from now on, and its exit once its output was read; returns the
 * unsubscribe function. Takes nothing away from the model's next poll.
 */
export function watchSession(entry: Entry, watcher: SessionWatcher): () => void {
  let active = true;
  const stop = entry.stream.watch((chunk) => {
    if (active) watcher.output(chunk);
  });
  void entry.stream.drained.then(() => {
    if (!active) return;
    active = false;
    stop();
    watcher.exit(entry.launched.process.exitStatus()?.exitCode ?? -1);
  });
  return () => {
    active = false;
    stop();
  };
}
