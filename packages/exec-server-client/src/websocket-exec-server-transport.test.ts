// The WebSocket transport's heartbeat against a real `ws` server on 127.0.0.1: a server that stops
// answering pings (its host vanished without closing the connection) is taken as gone, so nothing
// waits on a dead connection; one that answers keeps the connection.
import type { AddressInfo } from 'node:net';
import { UxError } from '@ux/protocol/core';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import { ExecServerConnectionError } from './exec-server-connection-error.js';
import { connectWebSocketExecServer } from './websocket-exec-server-transport.js';

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    for (const client of server.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A `ws` server; `pings()` resolves once it has received `count` pings. */
async function server(autoPong: boolean) {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, autoPong });
  servers.push(wss);
  await new Promise((resolve) => wss.once('listening', resolve));
  let received = 0;
  const waiters: { count: number; resolve: () => void }[] = [];
  wss.on('connection', (socket) =>
    socket.on('ping', () => {
      received += 1;
      for (const waiter of waiters.filter((w) => w.count <= received)) waiter.resolve();
    }),
  );
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    pings: (count: number) => new Promise<void>((resolve) => waiters.push({ count, resolve })),
  };
}

describe('WebSocket keep-alive', () => {
  it('takes a server that stops answering pings as gone, with the reason', async () => {
    const { url } = await server(false);
    const transport = await connectWebSocketExecServer({ url, keepAliveMs: 50 });
    const reason = await new Promise<string>((resolve) => transport.onClose(resolve));
    expect(reason).toBe(
      `the exec-server at ${url} did not answer a ping within 50 ms (the connection is taken as lost)`,
    );
  });

  it('keeps a connection whose server answers', async () => {
    const { url, pings } = await server(true);
    const transport = await connectWebSocketExecServer({ url, keepAliveMs: 30 });
    let closedBy: string | undefined;
    transport.onClose((reason) => {
      closedBy = reason;
    });
    // Five pings, each sent only after the one before was answered: the connection stayed.
    await pings(5);
    expect(closedBy).toBeUndefined();
    await transport.close();
    expect(closedBy).toContain('closed (1000');
  });
});

describe('a server that cannot be reached', () => {
  it('rejects with ExecServerConnectionError (stage connect), saying where and why', async () => {
    // A port that was just free: nothing listens there.
    const probe = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => probe.once('listening', resolve));
    const { port } = probe.address() as AddressInfo;
    await new Promise((resolve) => probe.close(resolve));
    const error = await connectWebSocketExecServer({ url: `ws://127.0.0.1:${port}` }).catch((e) => e);
    expect(ExecServerConnectionError.isInstance(error)).toBe(true);
    expect(UxError.isInstance(error)).toBe(true);
    expect(error.code).toBe('exec_server_unreachable');
    expect(error.stage).toBe('connect');
    expect(error.message).toContain(`cannot connect to the exec-server at ws://127.0.0.1:${port}`);
    expect(error.cause).toBeInstanceOf(Error);
  });
});
