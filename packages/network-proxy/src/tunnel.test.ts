import { connect, createServer, type Socket } from 'node:net';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { resetAndDestroy } from './tunnel.js';

useLeakCheck();

async function stalledPair(): Promise<Socket> {
  // A server that never reads: what the client writes stays queued.
  const accepted: Socket[] = [];
  const server = createServer((socket) => {
    socket.pause();
    socket.on('error', () => {});
    accepted.push(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const client = connect({
    host: '127.0.0.1',
    port: (server.address() as { port: number }).port,
    allowHalfOpen: true,
  });
  client.on('error', () => {});
  await new Promise((resolve) => client.once('connect', resolve));
  onTestFinished(
    () =>
      new Promise<void>((resolve) => {
        client.destroy();
        for (const socket of accepted) socket.destroy();
        server.close(() => resolve());
      }),
  );
  return client;
}

describe('resetAndDestroy', () => {
  it('closes a socket that was just ended (Node refuses a reset then and never emits close)', async () => {
    const client = await stalledPair();
    // Node 20: end() and resetAndDestroy() in one tick → "reset EINVAL", no 'close', the handle leaks.
    client.end();
    const closed = new Promise((resolve) => client.once('close', resolve));
    resetAndDestroy(client);
    await closed;
    expect(client.destroyed).toBe(true);
  });

  it('closes a socket whose end is queued behind unsent data', async () => {
    const client = await stalledPair();
    client.write(Buffer.alloc(16 * 1024 * 1024));
    client.end();
    expect(client.writableFinished).toBe(false);
    const closed = new Promise((resolve) => client.once('close', resolve));
    resetAndDestroy(client);
    await closed;
  });

  it('resets a connected socket that has not ended', async () => {
    const client = await stalledPair();
    const closed = new Promise((resolve) => client.once('close', resolve));
    resetAndDestroy(client);
    await closed;
  });
});
