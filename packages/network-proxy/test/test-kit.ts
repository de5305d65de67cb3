// Helpers for this package's tests: origin servers on 127.0.0.1, a resolver table, raw SOCKS5 and
// CONNECT clients, curl. Not exported from the package.
import { execFile } from 'node:child_process';
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import type { ResolveHost } from '../src/connect-upstream.js';

/** Where a test client reaches the proxy. */
export type Endpoint = { port: number } | { path: string };

export function dial(endpoint: Endpoint): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket =
      'path' in endpoint
        ? connect({ path: endpoint.path, allowHalfOpen: true })
        : connect({ host: '127.0.0.1', port: endpoint.port, allowHalfOpen: true });
    socket.once('connect', () => {
      socket.off('error', reject);
      // A reset from the proxy shows up as 'close' (after this error); tests look at that.
      socket.on('error', () => {});
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** A fixed name table; other names fail like DNS does (ENOTFOUND). Counts lookups per name. */
export function resolverFor(table: Record<string, string[]>): ResolveHost & { lookups: Map<string, number> } {
  const lookups = new Map<string, number>();
  const resolve = async (host: string) => {
    lookups.set(host, (lookups.get(host) ?? 0) + 1);
    const addresses = table[host];
    if (addresses) return addresses;
    throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  };
  return Object.assign(resolve, { lookups });
}

async function listen(server: Server | ReturnType<typeof createHttpServer>): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

export interface Origin {
  port: number;
  /** The requests it saw, in order. */
  requests: {
    method: string;
    url: string;
    headers: IncomingMessage['headers'];
    rawHeaders: string[];
    body: string;
  }[];
  close(): Promise<void>;
}

/**
 * An HTTP server that answers every request with a JSON echo of what it received
 * (`{ method, url, headers, body }`), or with N bytes for `/bytes/N`.
 */
export async function startOrigin(): Promise<Origin> {
  const requests: Origin['requests'] = [];
  const server = createHttpServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const seen = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        body,
      };
      requests.push(seen);
      const bytes = /^\/bytes\/([0-9]+)$/.exec(req.url ?? '');
      if (bytes) {
        res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': bytes[1] });
        res.end(Buffer.alloc(Number(bytes[1]), 0x61));
        return;
      }
      res.writeHead(200, {
        'Content-Type': 'application/json',
        Connection: 'keep-alive, X-Hop',
        'X-Hop': 'named in Connection: not forwarded',
        'Keep-Alive': 'timeout=99, max=7',
        'Set-Cookie': ['a=1', 'b=2'],
      });
      res.end(JSON.stringify(seen));
    });
  });
  // `Upgrade: echo`: switches protocols, then sends back what it receives.
  server.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => {
    requests.push({
      method: req.method ?? '',
      url: req.url ?? '',
      headers: req.headers,
      rawHeaders: req.rawHeaders,
      body: '',
    });
    socket.on('error', () => {});
    socket.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\n\r\n');
    if (head.length > 0) socket.write(head);
    socket.pipe(socket);
  });
  const port = await listen(server);
  return {
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface Echo {
  port: number;
  /** Bytes received in total. */
  received(): number;
  close(): Promise<void>;
}

/** A TCP server that sends back what it receives and ends when the client ends. */
export async function startEcho(): Promise<Echo> {
  let received = 0;
  const sockets = new Set<Socket>();
  const server = createServer({ allowHalfOpen: true }, (socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    socket.pipe(socket);
  });
  const port = await listen(server);
  return {
    port,
    received: () => received,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** Collects everything until the socket ends or closes (at once for a socket already closed). */
export function readAll(socket: Socket): Promise<Buffer> {
  if (socket.closed) return Promise.resolve(Buffer.alloc(0));
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(chunks));
    };
    socket.once('end', finish);
    socket.once('close', finish);
    socket.resume();
  });
}

/** Reads exactly `count` bytes (or rejects when the socket ends first). */
export function readBytes(socket: Socket, count: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      if (buffer.length >= count) {
        cleanup();
        const rest = buffer.subarray(count);
        if (rest.length > 0) socket.unshift(rest);
        resolve(buffer.subarray(0, count));
      }
    };
    const onEnd = () => {
      cleanup();
      reject(new Error(`the socket ended after ${buffer.length} of ${count} bytes`));
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.pause();
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    socket.resume();
  });
}

/** Reads up to the end of an HTTP response head; returns the head and keeps later bytes in the socket. */
export function readHead(socket: Socket): Promise<{ status: number; head: string }> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const end = buffer.indexOf('\r\n\r\n');
      if (end < 0) return;
      cleanup();
      const rest = buffer.subarray(end + 4);
      if (rest.length > 0) socket.unshift(rest);
      const head = buffer.subarray(0, end).toString();
      resolve({ status: Number(head.split(' ')[1]), head });
    };
    const onEnd = () => {
      cleanup();
      reject(new Error(`the socket ended before a response head: ${JSON.stringify(buffer.toString())}`));
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('end', onEnd);
      socket.off('close', onEnd);
      socket.pause();
    };
    socket.on('data', onData);
    socket.once('end', onEnd);
    socket.once('close', onEnd);
    socket.resume();
  });
}

export type SocksAddress =
  | { type: 'domain'; host: string }
  | { type: 'ipv4'; host: string }
  | { type: 'ipv6'; bytes: number[] };

/**
 * A SOCKS5 client written against RFC 1928: greeting with no-authentication, then one request.
 * Resolves with the reply code and the socket (open: the tunnel, when the code is 0).
 */
export async function socks5Request(
  endpoint: Endpoint,
  address: SocksAddress,
  port: number,
  command = 0x01,
): Promise<{ code: number; socket: Socket; reply: Buffer }> {
  const socket = await dial(endpoint);
  try {
    return await socks5Exchange(socket, address, port, command);
  } catch (error) {
    socket.destroy();
    throw error;
  }
}

async function socks5Exchange(
  socket: Socket,
  address: SocksAddress,
  port: number,
  command: number,
): Promise<{ code: number; socket: Socket; reply: Buffer }> {
  socket.write(Buffer.from([0x05, 0x01, 0x00]));
  const method = await readBytes(socket, 2);
  if (method[0] !== 0x05 || method[1] !== 0x00)
    throw new Error(`unexpected method reply ${method.toString('hex')}`);
  let encoded: Buffer;
  if (address.type === 'domain') {
    const name = Buffer.from(address.host);
    encoded = Buffer.concat([Buffer.from([0x03, name.length]), name]);
  } else if (address.type === 'ipv4') encoded = Buffer.from([0x01, ...address.host.split('.').map(Number)]);
  else encoded = Buffer.from([0x04, ...address.bytes]);
  const portBytes = Buffer.alloc(2);
  portBytes.writeUInt16BE(port);
  socket.write(Buffer.concat([Buffer.from([0x05, command, 0x00]), encoded, portBytes]));
  const head = await readBytes(socket, 4);
  const addressLength = head[3] === 0x01 ? 4 : head[3] === 0x04 ? 16 : (await readBytes(socket, 1))[0]!;
  const tail = await readBytes(socket, addressLength + 2);
  return { code: head[1]!, socket, reply: Buffer.concat([head, tail]) };
}

/** Sends `CONNECT authority` and reads the response head. */
export async function httpConnect(
  endpoint: Endpoint,
  authority: string,
): Promise<{ status: number; head: string; socket: Socket }> {
  const socket = await dial(endpoint);
  socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`);
  const { status, head } = await readHead(socket);
  return { status, head, socket };
}

/** Writes `data`, then reads everything until the proxy closes the connection. */
export async function rawExchangeBytes(endpoint: Endpoint, data: string | Buffer): Promise<Buffer> {
  const socket = await dial(endpoint);
  const all = readAll(socket);
  socket.write(data);
  const result = await all;
  socket.destroy();
  return result;
}

/** `rawExchangeBytes`, as text. */
export async function rawExchange(endpoint: Endpoint, data: string | Buffer): Promise<string> {
  return (await rawExchangeBytes(endpoint, data)).toString();
}

export interface CurlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs curl without the caller's proxy variables (asynchronously: the proxy lives in this process). */
export function curl(args: string[]): Promise<CurlResult> {
  return new Promise((resolve) => {
    execFile(
      'curl',
      ['--silent', '--show-error', '--max-time', '20', ...args],
      { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** Polls until `check` holds (or throws after `timeoutMs`). */
export async function eventually(
  check: () => boolean,
  timeoutMs = 15_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A promise with its resolve function, for answers a test gives later. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}
