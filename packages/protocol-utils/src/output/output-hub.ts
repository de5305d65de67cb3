import type { OutputSource } from '@ux/protocol/core';
import { HeadTailBuffer } from './head-tail-buffer.js';

/** Output kept for a process before anyone listens (head and tail, like the buffer): 1 MiB. */
export const PENDING_OUTPUT_MAX_BYTES = 1024 * 1024;

/**
 * Fans one process's output out to listeners, as `ExecProcess.onOutput` promises: until the first
 * listener arrives, output is kept (head and tail, up to `PENDING_OUTPUT_MAX_BYTES`) and handed to that
 * listener, so nothing produced between spawn and subscription is lost. Local and remote processes
 * share it.
 */
export class OutputHub {
  private readonly listeners = new Set<(chunk: Uint8Array, stream?: OutputSource) => void>();
  private pending: HeadTailBuffer | undefined = new HeadTailBuffer(PENDING_OUTPUT_MAX_BYTES);

  emit(chunk: Uint8Array, stream?: OutputSource): void {
    if (this.pending) {
      this.pending.push(chunk);
      return;
    }
    for (const listener of this.listeners) listener(chunk, stream);
  }

  /** Output kept before the first listener reaches it merged, without a stream name. */
  subscribe(listener: (chunk: Uint8Array, stream?: OutputSource) => void): () => void {
    this.listeners.add(listener);
    const pending = this.pending;
    if (pending) {
      this.pending = undefined;
      if (pending.retainedBytes > 0) listener(pending.drain());
    }
    return () => {
      this.listeners.delete(listener);
    };
  }
}
