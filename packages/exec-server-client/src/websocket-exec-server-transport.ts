import { readFileSync } from 'node:fs';
import { ExecServerConnectionError } from './exec-server-connection-error.js';
import { type ExecServerTransport, TransportEvents } from './exec-server-transport.js';

export interface WebSocketExecServerOptions {
  /** `ws://host:port` (or `wss://` behind a TLS proxy). */
  url: string;
  /** The capability token, sent as `Authorization: Bearer <token>`… */
  token?: string;
  /** …or a file holding it (surrounding whitespace ignored). */
  tokenFile?: string;
  /** How long the WebSocket handshake may take; default 10000 ms. */
  handshakeTimeoutMs?: number;
  /** Largest message accepted from the server; default 64 MiB. */
  maxMessageBytes?: number;
  /**
   * How often a ping checks that the server is still there; a server that has not answered the last
   * one by the next is taken as gone (its host vanished, a network dropped without a FIN), so nothing
   * waits on a dead connection. Default 15000 ms; 0 turns it off.
   */
  keepAliveMs?: number;
}

/** Connects to an exec-server over WebSocket with a capability token; one JSON message per text frame. */
export async function connectWebSocketExecServer(
  options: WebSocketExecServerOptions,
): Promise<ExecServerTransport> {
  const token =
    options.token ?? (options.tokenFile ? readFileSync(options.tokenFile, 'utf8').trim() : undefined);
  // Loaded here, not at the top: most hosts never open a WebSocket, and `ws` costs start-up time.
  const { default: WebSocket } = await import('ws');
  const socket = new WebSocket(options.url, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    handshakeTimeout: options.handshakeTimeoutMs ?? 10_000,
    maxPayload: options.maxMessageBytes ?? 64 * 1024 * 1024,
    perMessageDeflate: false,
  });
  const events = new TransportEvents();
  await new Promise<void>((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('unexpected-response', (_request, response) => {
      const hint =
        response.statusCode === 401
          ? ': the server refused the capability token (check --ws-token-file / the token you pass)'
          : '';
      reject(
        new ExecServerConnectionError(
          'connect',
          `the exec-server at ${options.url} answered HTTP ${response.statusCode}${hint}`,
        ),
      );
      response.resume();
      socket.terminate();
    });
    socket.once('error', (error) =>
      reject(
        new ExecServerConnectionError(
          'connect',
          `cannot connect to the exec-server at ${options.url}: ${error.message}`,
          { cause: error },
        ),
      ),
    );
  });
  socket.on('error', () => {});
  const keepAliveMs = options.keepAliveMs ?? 15_000;
  let answered = true;
  socket.on('pong', () => {
    answered = true;
  });
  const heartbeat =
    keepAliveMs > 0
      ? setInterval(() => {
          if (!answered) {
            events.close(
              `the exec-server at ${options.url} did not answer a ping within ${keepAliveMs} ms (the connection is taken as lost)`,
            );
            socket.terminate();
            return;
          }
          answered = false;
          socket.ping();
        }, keepAliveMs)
      : undefined;
  // A check, not a reason to stay alive.
  heartbeat?.unref();
  socket.on('message', (data, isBinary) => {
    if (isBinary) {
      events.close(`the exec-server at ${options.url} sent a binary frame`);
      socket.terminate();
      return;
    }
    events.message(data.toString());
  });
  const closed = new Promise<void>((resolve) => {
    socket.once('close', (code, reason) => {
      clearInterval(heartbeat);
      events.close(
        `the connection to the exec-server at ${options.url} closed (${code}${reason.length ? ` ${reason.toString()}` : ''})`,
      );
      resolve();
    });
  });
  return {
    description: options.url,
    send(message) {
      if (socket.readyState === WebSocket.OPEN) socket.send(message);
    },
    onMessage: (listener) => events.onMessage(listener),
    onClose: (listener) => events.onClose(listener),
    async close() {
      if (socket.readyState === WebSocket.CLOSED) return;
      socket.close(1000);
      const timer = setTimeout(() => socket.terminate(), 2_000);
      await closed;
      clearTimeout(timer);
    },
  };
}
