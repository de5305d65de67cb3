import type { Writable } from 'node:stream';
import { StdinClosedError, UxError } from '@ux/protocol/core';
import { MAX_STDIN_QUEUED_BYTES } from './spawn-constants.js';

/**
 * Queues bytes on a child's stdin pipe (POSIX and Windows pipe processes alike). Refuses a child with
 * no stdin or one that exited, and refuses to queue more than `MAX_STDIN_QUEUED_BYTES` for a child
 * that is not reading, so a stuck process cannot make the host buffer without bound.
 */
export function writeChildStdin(
  stdin: Writable | null | undefined,
  processId: number | undefined,
  exited: boolean,
  data: Uint8Array | string,
): void {
  if (!stdin) throw new StdinClosedError({ processId, reason: 'no_stdin' });
  if (exited || stdin.destroyed || stdin.writableEnded) {
    throw new StdinClosedError({ processId, reason: 'exited' });
  }
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  if (stdin.writableLength + bytes.length > MAX_STDIN_QUEUED_BYTES) {
    throw new UxError(
      'invalid_arguments',
      `refusing to write ${bytes.length} bytes: ${stdin.writableLength} bytes are still waiting for the process to read them (limit ${MAX_STDIN_QUEUED_BYTES})`,
    );
  }
  stdin.write(bytes);
}
