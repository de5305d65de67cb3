import type { OutputSource } from '@ux/protocol/core';
import { HeadTailBuffer } from './head-tail-buffer.js';
import { PENDING_OUTPUT_MAX_BYTES } from './spawn-constants.js';

/**
 * Fans one process's output out to listeners. Until the first listener arrives, output is kept
 * (head and tail, up to 1 MiB) and handed to that listener, so nothing produced between spawn and
 * subscription is lost.
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
