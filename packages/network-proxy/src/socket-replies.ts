import type { Socket } from 'node:net';

/** How long a refused client may take to read the answer and close, before the proxy closes it. */
export const LINGER_MS = 2_000;

/**
 * Writes a last answer and half-closes, then reads and drops whatever the client still sends until it
 * closes (or `LINGER_MS` passed). Closing at once could reset the connection before the client read
 * the answer, when it had sent more bytes than were read.
 */
export function endAndLinger(socket: Socket, data: Buffer | string): void {
  if (socket.destroyed) return;
  socket.end(data);
  socket.resume();
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
  // With allowHalfOpen, the socket is destroyed by itself once both sides ended.
  socket.once('end', () => {
    if (socket.writableFinished) socket.destroy();
  });
}

/** A raw HTTP/1.1 response with a text body, for sockets the HTTP server no longer owns (CONNECT, upgrade). */
export function rawTextResponse(
  status: number,
  reason: string,
  body: string,
  proxyError?: string,
  extraHeaders: readonly string[] = [],
): string {
  const text = `${body}\n`;
  return [
    `HTTP/1.1 ${status} ${reason}`,
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(text)}`,
    ...(proxyError ? [`X-Proxy-Error: ${proxyError}`] : []),
    ...extraHeaders,
    'Connection: close',
    '',
    text,
  ].join('\r\n');
}

/** Bytes kept from a client while its connection is being decided, before reading stops. */
const HOLD_LIMIT = 256 * 1024;

/**
 * Reads the client while its destination is decided and connected, so that it going away is seen:
 * an end (the client closed its side before it had an answer) or a close calls `gone`. What it sent
 * early is kept (up to 256 KiB, then reading pauses) and returned by the release function, which stops
 * watching and pauses the socket again.
 */
export function watchWhileDeciding(socket: Socket, gone: () => void): () => Buffer {
  const chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= HOLD_LIMIT) socket.pause();
  };
  socket.on('data', onData);
  socket.once('end', gone);
  socket.once('close', gone);
  socket.resume();
  return () => {
    socket.off('data', onData);
    socket.off('end', gone);
    socket.off('close', gone);
    socket.pause();
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
  };
}
