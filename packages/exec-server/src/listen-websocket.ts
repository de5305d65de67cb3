import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { bearerMatches } from './capability-token.js';
import type { ExecServer } from './exec-server.js';
import { MAX_MESSAGE_BYTES } from './exec-server-constants.js';

export interface WebSocketListenOptions {
  /** Interface to bind; give a loopback address unless remote clients must reach it. */
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** SHA-256 (hex) of the capability token every connection must present as `Authorization: Bearer`. */
  tokenSha256: string;
  maxMessageBytes?: number;
}

export interface WebSocketListener {
  /** `ws://host:port` as bound. */
  readonly url: string;
  /** Stops accepting and closes every connection (the server's processes are the server's to stop). */
  close(): Promise<void>;
}

/**
 * Accepts exec-server connections over WebSocket, one JSON message per text frame. Every upgrade must
 * carry the capability token; anything else gets HTTP 401 and no connection.
 */
export async function listenWebSocket(
  server: ExecServer,
  options: WebSocketListenOptions,
): Promise<WebSocketListener> {
  const maxMessageBytes = options.maxMessageBytes ?? MAX_MESSAGE_BYTES;
  const http = createServer((_request, response) => {
    response
      .writeHead(426, { 'content-type': 'text/plain' })
      .end('this is an exec-server: connect with WebSocket\n');
  });
  const wss = new WebSocketServer({ noServer: true, maxPayload: maxMessageBytes });
  http.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (!bearerMatches(request.headers.authorization, options.tokenSha256)) {
      socket.end(
        'HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\nmissing or wrong capability token (send Authorization: Bearer <token>)\n',
      );
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => {
      const handler = server.accept({
        send: (message) => ws.send(message, { binary: false }),
        get pendingBytes() {
          return ws.bufferedAmount;
        },
        close: () => ws.close(),
      });
      ws.on('message', (data, isBinary) => {
        if (isBinary) {
          handler.unreadable('binary frames are not supported; send each message as a text frame');
          return;
        }
        handler.receive(data.toString());
      });
      ws.on('close', () => handler.disconnected());
      ws.on('error', () => ws.terminate());
    });
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  const address = http.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `ws://${host}:${address.port}`,
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
