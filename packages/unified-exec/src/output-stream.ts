import type { ExecProcess } from '@ux/protocol/core';
import { HeadTailBuffer, UNIFIED_EXEC_OUTPUT_MAX_BYTES } from '@ux/spawn';
import { utf8SafeLength } from './utf8-boundary.js';

/** Largest output delta event. */
export const OUTPUT_DELTA_MAX_BYTES = 8192;
/** Most delta events for one command; the transcript keeps recording after that. */
export const MAX_OUTPUT_DELTAS_PER_CALL = 10_000;
/** After exit, how long the stream waits for trailing output before calling the output drained. */
export const TRAILING_OUTPUT_GRACE_MS = 100;

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

  constructor(
    process: ExecProcess,
    private readonly onDelta: (chunk: Uint8Array) => void,
  ) {
    process.onOutput((chunk) => {
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
