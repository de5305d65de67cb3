import type { ExecProcess } from '@ux/protocol/core';
import { HeadTailBuffer } from '@ux/protocol-utils';
import { UNIFIED_EXEC_OUTPUT_MAX_BYTES } from './spawn-constants.js';

/**
 * A process's retained output: every chunk goes into a head/tail buffer that tool calls drain, and
 * waiters are woken on each chunk, at the exit and when the output closes. Waiters that come back many
 * times (a poll loop over a chatty process) use `onChange` listeners: racing a promise that stays
 * pending for the process's life would leave one reaction behind on it per turn.
 */
export class OutputTracker {
  readonly buffer: HeadTailBuffer;
  private closedFlag = false;
  private readonly listeners = new Set<() => void>();
  // One shared promise for "the next change": callers that give up waiting leave nothing behind.
  private next: Promise<void> | undefined;
  private resolveNext: (() => void) | undefined;

  constructor(process: ExecProcess, maxBytes = UNIFIED_EXEC_OUTPUT_MAX_BYTES) {
    this.buffer = new HeadTailBuffer(maxBytes);
    process.onOutput((chunk) => {
      this.buffer.push(chunk);
      this.wake();
    });
    void process.exited.then(() => this.wake());
    void process.closed.then(() => {
      this.closedFlag = true;
      this.wake();
    });
  }

  /** Calls `listener` on every chunk, at the exit and when the output closes; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** True once every byte of output has arrived. */
  get outputClosed(): boolean {
    return this.closedFlag;
  }

  /** Resolves at the next chunk, the exit or when the output closes (at once if it already has). */
  nextChange(): Promise<void> {
    if (this.closedFlag) return Promise.resolve();
    this.next ??= new Promise((resolve) => {
      this.resolveNext = resolve;
    });
    return this.next;
  }

  private wake(): void {
    const resolve = this.resolveNext;
    this.next = undefined;
    this.resolveNext = undefined;
    resolve?.();
    for (const listener of this.listeners) listener();
  }
}
