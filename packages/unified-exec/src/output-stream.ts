import type { ExecProcess } from '@ux/protocol/core';
import { HeadTailBuffer, UNIFIED_EXEC_OUTPUT_MAX_BYTES } from '@ux/spawn';
import { utf8SafeLength } from './utf8-boundary.js';

/** Largest output delta event. */
export const OUTPUT_DELTA_MAX_BYTES = 8192;
/** Most delta events for one command; the transcript keeps recording after that. */
export const MAX_OUTPUT_DELTAS_PER_CALL = 10_000;
/** After exit, how long the stream waits for trailing output before calling the output drained. */
export const TRAILING_OUTPUT_GRACE_MS = 100;
/** Bytes of a session's latest output kept for its last lines (`ux ps`). */
export const LAST_OUTPUT_KEEP_BYTES = 4096;

/**
 * The streaming consumer of one process's output: cuts it into deltas at character boundaries (at most
 * 8192 bytes, at most 10000 per command) and keeps a 1 MiB head/tail transcript for the End event.
 * It subscribes after spawn, so what the process printed inside the early-exit window reaches the
 * tool response but not the deltas (as upstream).
 */
export class OutputStream {
  readonly transcript = new HeadTailBuffer(UNIFIED_EXEC_OUTPUT_MAX_BYTES);
  /** Resolves when the output closed, or 100 ms after the exit, whichever is first. */
  readonly drained: Promise<void>;
  private pending: Uint8Array = new Uint8Array(0);
  private deltas = 0;
  private latest: Uint8Array = new Uint8Array(0);
  private readonly watchers = new Set<(chunk: Uint8Array) => void>();
  /** When the process last printed (ms since the epoch); undefined: not yet. */
  lastOutputAt: number | undefined;

  /**
   * `earlier`: what the process printed before the stream subscribed (the early-exit window), which
   * only its last lines (`lastLines`) include.
   */
  constructor(
    process: ExecProcess,
    private readonly onDelta: (chunk: Uint8Array) => void,
    earlier?: Uint8Array,
  ) {
    if (earlier && earlier.length > 0) {
      this.keepLatest(earlier);
      this.lastOutputAt = Date.now();
    }
    process.onOutput((chunk) => {
      this.lastOutputAt = Date.now();
      this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
      this.flush(false);
    });
    this.drained = new Promise((resolve) => {
      const done = () => {
        this.flush(true);
        resolve();
      };
      void process.closed.then(done);
      void process.exited.then(() => setTimeout(done, TRAILING_OUTPUT_GRACE_MS).unref());
    });
  }

  /**
   * Every piece of output from now on, whole characters, without the per-call delta cap (a person
   * watching the session); returns the unsubscribe function.
   */
  watch(listener: (chunk: Uint8Array) => void): () => void {
    this.watchers.add(listener);
    return () => this.watchers.delete(listener);
  }

  /** The last `count` lines of the latest output (at most 4 KiB of it), without a final empty line. */
  lastLines(count: number): string[] {
    if (count <= 0 || this.latest.length === 0) return [];
    const text = new TextDecoder().decode(this.latest).replace(/\r\n/g, '\n');
    const lines = text.split(/[\n\r]/);
    if (lines[lines.length - 1] === '') lines.pop();
    return lines.slice(-count);
  }

  /** The latest output ends inside a line (a prompt waiting on the same line, say). */
  get lastLineOpen(): boolean {
    const last = this.latest[this.latest.length - 1];
    return last !== undefined && last !== 0x0a && last !== 0x0d;
  }

  private keepLatest(piece: Uint8Array): void {
    const joined = this.latest.length === 0 ? piece : Buffer.concat([this.latest, piece]);
    if (joined.length <= LAST_OUTPUT_KEEP_BYTES) {
      this.latest = joined;
      return;
    }
    let start = joined.length - LAST_OUTPUT_KEEP_BYTES;
    // Start at a character, not inside one.
    while (start < joined.length && ((joined[start] ?? 0) & 0xc0) === 0x80) start++;
    // A copy: a view would keep the whole chunk it came from alive.
    this.latest = Uint8Array.prototype.slice.call(joined, start);
  }

  private flush(final: boolean): void {
    while (this.pending.length > 0) {
      let length = utf8SafeLength(this.pending, OUTPUT_DELTA_MAX_BYTES);
      if (length === 0) {
        if (!final) return;
        length = Math.min(this.pending.length, OUTPUT_DELTA_MAX_BYTES);
      }
      const piece = this.pending.subarray(0, length);
      this.pending = this.pending.subarray(length);
      this.transcript.push(piece);
      this.keepLatest(piece);
      for (const watcher of this.watchers) {
        try {
          watcher(piece);
        } catch {
          // A watcher's failure (a person's terminal that went) must not stop the stream.
        }
      }
      if (this.deltas < MAX_OUTPUT_DELTAS_PER_CALL) {
        this.deltas += 1;
        this.onDelta(piece);
      }
    }
  }
}

/** End-event output: the streamed transcript, or (when nothing was streamed) what the call collected. */
export function endOutput(stream: OutputStream, fallback: string) {
  const transcript = new TextDecoder().decode(stream.transcript.snapshot());
  const text = transcript === '' ? fallback : transcript;
  return { stdout: text, stderr: '', aggregated_output: text, formatted_output: text };
}
