import type { Readable, Writable } from 'node:stream';
import { LineSplitter } from '@ux/protocol-utils';
import type { ExecServer } from './exec-server.js';
import { MAX_MESSAGE_BYTES, SHUTDOWN_GRACE_MS } from './exec-server-constants.js';

export interface StdioStreams {
  input: Readable;
  output: Writable;
}

/**
 * Serves exactly one connection over a pair of streams: one JSON message per line each way, nothing
 * else on the output. The end of the input (the client closed it) is the end of the server: it shuts
 * the server down (every process is ended, so a read waiting on one wakes), answers every request it
 * had received (for at most `SHUTDOWN_GRACE_MS` more), and then resolves.
 */
export function serveStdio(
  server: ExecServer,
  streams: StdioStreams,
  maxMessageBytes = MAX_MESSAGE_BYTES,
): Promise<void> {
  const { input, output } = streams;
  let batch: Buffer[] = [];
  let batchBytes = 0;
  let flushScheduled = false;
  let closed = false;
  const flush = () => {
    flushScheduled = false;
    if (closed || batch.length === 0) return;
    const parts = batch;
    batch = [];
    batchBytes = 0;
    // One writev for everything produced in this turn of the event loop.
    output.cork();
    for (const part of parts) output.write(part);
    output.uncork();
  };
  const newline = Buffer.from('\n');
  const handler = server.accept({
    send(message) {
      if (closed) return;
      const bytes = typeof message === 'string' ? Buffer.from(message, 'utf8') : message;
      batch.push(bytes, newline);
      batchBytes += bytes.length + 1;
      if (!flushScheduled) {
        flushScheduled = true;
        setImmediate(flush);
      }
    },
    get pendingBytes() {
      return output.writableLength + batchBytes;
    },
    close() {
      input.destroy();
    },
  });
  const splitter = new LineSplitter(
    maxMessageBytes,
    (line) => handler.receive(line),
    () => handler.unreadable(`a line longer than ${maxMessageBytes} bytes was skipped`),
  );
  let ending = false;
  return new Promise((resolve) => {
    const end = async () => {
      if (ending) return;
      ending = true;
      await server.shutdown();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        handler.drained(),
        new Promise((wait) => {
          timer = setTimeout(wait, SHUTDOWN_GRACE_MS);
        }),
      ]);
      clearTimeout(timer);
      flush();
      closed = true;
      handler.disconnected();
      resolve();
    };
    input.on('data', (data: Buffer) => {
      if (!ending) splitter.push(data);
    });
    input.once('end', () => void end());
    input.once('close', () => void end());
    input.once('error', () => void end());
    // A client that stops reading must not crash the server with EPIPE.
    output.on('error', () => {});
  });
}
