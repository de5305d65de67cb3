import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { onTestFinished } from 'vitest';

export interface CuttableRelay {
  /** `ws://127.0.0.1:PORT` of the relay: give it to a client instead of the server's own URL. */
  url: string;
  /** Drops every connection through the relay, as a network drop would; new ones are relayed again. */
  cut(): void;
  /** Drops every connection and refuses new ones: the server is unreachable from then on. */
  down(): Promise<void>;
}

/**
 * A TCP relay on 127.0.0.1 to `port`, for tests of lost connections: the server behind it lives on
 * while the test cuts what connects to it. Closed when the test ends.
 */
export async function cuttableRelay(port: number): Promise<CuttableRelay> {
  const sockets = new Set<Socket>();
  const relay = createServer((inbound) => {
    const outbound = connect(port, '127.0.0.1');
    for (const socket of [inbound, outbound]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {});
    }
    inbound.pipe(outbound).pipe(inbound);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };
  const down = () =>
    new Promise<void>((resolve) => {
      cut();
      if (relay.listening) relay.close(() => resolve());
      else resolve();
    });
  onTestFinished(down);
  return { url: `ws://127.0.0.1:${(relay.address() as AddressInfo).port}`, cut, down };
}
