import { write } from 'node:fs';
import { StdinClosedError, UxError } from '@ux/protocol/core';
import { MAX_STDIN_QUEUED_BYTES } from './spawn-constants.js';

/**
 * Writes to a PTY master in order. When the terminal's input queue is full (EAGAIN) it retries on a
 * short timer rather than spinning, and once the terminal is gone (EIO, EBADF) it drops what is
 * queued and refuses more.
 */
export class PtyWriter {
  private readonly queue: Uint8Array[] = [];
  private queuedBytes = 0;
  private busy = false;
  private broken = false;

  constructor(
    private readonly fd: number,
    private readonly processId: number | undefined,
  ) {}

  enqueue(bytes: Uint8Array): void {
    if (this.broken) throw new StdinClosedError({ processId: this.processId, reason: 'exited' });
    if (this.queuedBytes + bytes.length > MAX_STDIN_QUEUED_BYTES) {
      throw new UxError(
        'invalid_arguments',
        `refusing to write ${bytes.length} bytes: ${this.queuedBytes} bytes are still waiting for the terminal to take them (limit ${MAX_STDIN_QUEUED_BYTES})`,
      );
    }
    if (bytes.length === 0) return;
    this.queue.push(bytes);
    this.queuedBytes += bytes.length;
    if (!this.busy) this.flush();
  }

  close(): void {
    this.broken = true;
    this.queue.length = 0;
    this.queuedBytes = 0;
  }

  private flush(): void {
    const next = this.queue[0];
    if (!next || this.broken) {
      this.busy = false;
      return;
    }
    this.busy = true;
    write(this.fd, next, 0, next.length, null, (error, written) => {
      if (error) {
        if (error.code === 'EAGAIN') {
          setTimeout(() => this.flush(), 5);
          return;
        }
        this.close();
        this.busy = false;
        return;
      }
      this.queuedBytes -= written;
      if (written >= next.length) this.queue.shift();
      else this.queue[0] = next.subarray(written);
      this.flush();
    });
  }
}
