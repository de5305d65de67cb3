import type { Socket } from 'node:net';

/**
 * Joins two connected sockets until both are closed. Bytes flow both ways with backpressure; an end
 * (FIN) on one side is passed on as an end of the other, so half-closing protocols work. When one side
 * is gone completely, the other is ended and, once its last bytes are written, destroyed: nothing is
 * left to carry what it might still send. An error on either side destroys it and resets the other. Resolves with the
 * first error, if any, once both sockets are closed. Both sockets must allow half-open connections.
 */
export function tunnel(client: Socket, upstream: Socket): Promise<{ error?: Error }> {
  if (client.destroyed || upstream.destroyed) {
    client.destroy();
    upstream.destroy();
    return Promise.all([whenClosed(client), whenClosed(upstream)]).then(() => ({}));
  }
  return new Promise((resolve) => {
    let error: Error | undefined;
    let open = 2;
    const settle = () => {
      open -= 1;
      if (open === 0) resolve(error ? { error } : {});
    };
    const join = (side: Socket, other: Socket) => {
      side.on('error', (cause: Error) => {
        error ??= cause;
        side.destroy();
        // A reset (or any failure) is passed on as a reset: a clean end would make a cut-off stream
        // look complete to the other side.
        resetAndDestroy(other);
      });
      side.once('close', (hadError: boolean) => {
        if (hadError || error) other.destroy();
        else if (!other.destroyed) {
          other.end();
          if (other.writableFinished) other.destroy();
          else other.once('finish', () => other.destroy());
        }
        settle();
      });
    };
    join(client, upstream);
    join(upstream, client);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
    upstream.resume();
  });
}

/** Resolves once the socket has emitted 'close' (at once if it already has). */
export function whenClosed(socket: Socket): Promise<void> {
  if (socket.closed) return Promise.resolve();
  return new Promise((resolve) => socket.once('close', () => resolve()));
}

/**
 * Closes with a TCP reset (so the peer sees ECONNRESET) when it can, else destroys it. A socket whose
 * end is under way is only destroyed: Node 20 then refuses the reset ("reset EINVAL") and never emits
 * 'close', leaking the descriptor.
 */
export function resetAndDestroy(socket: Socket): void {
  if (socket.destroyed) return;
  if (socket.writableEnded || socket.connecting) {
    socket.destroy();
    return;
  }
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}
