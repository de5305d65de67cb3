import { lookup } from 'node:dns/promises';
import { chmodSync, lstatSync } from 'node:fs';
import type { Server as HttpServer } from 'node:http';
import { type AddressInfo, createServer, isIP, type Server, type Socket } from 'node:net';
import { connectUpstream, type ResolveHost, UpstreamError } from './connect-upstream.js';
import { ConnectionRecord, type NetworkConnectionEvent, type OpenConnection } from './connection-record.js';
import { briefDenial, type DenialDescription, describeDenial } from './describe-denial.js';
import { compileDomainPolicy, type NetworkPolicy } from './domain-policy.js';
import { createNetworkDecider, type NetworkAsk, type ProxyProtocol } from './network-decider.js';
import { NetworkProxyError } from './network-proxy-error.js';
import type { ProxyTarget } from './parse-authority.js';
import type { EstablishOutcome, ProxyContext } from './proxy-context.js';
import { createHttpFrontEnd } from './serve-http.js';
import { serveSocks5 } from './serve-socks5.js';
import { endAndLinger } from './socket-replies.js';
import { resetAndDestroy } from './tunnel.js';

export interface NetworkProxyOptions {
  /** Which hosts may be reached; validated here (a bad pattern throws `NetworkProxyError`). */
  policy: NetworkPolicy;
  /** Asked about hosts in neither list. Without it, such hosts are denied. */
  ask?: NetworkAsk;
  /** Host name → IP addresses. Default: `dns.promises.lookup(host, { all: true })`. */
  resolve?: ResolveHost;
  /**
   * Connect names allowed by a wildcard or an answer to loopback, private and link-local addresses.
   * Default false: such a name is refused when every address it resolves to is local (a public name
   * pointed at 127.0.0.1 or the LAN by its DNS). Names listed exactly and IP addresses listed (or
   * approved) themselves are always connected.
   */
  allowLocalAddresses?: boolean;
  /** Per address tried when connecting upstream. Default 10 000 ms. */
  connectTimeoutMs?: number;
  /** A client must name its destination (or send its first request) within this time. Default 30 000 ms. */
  handshakeTimeoutMs?: number;
}

export interface NetworkProxyStats {
  /** Exchanges in progress (deciding, connecting, tunnelling, forwarding). */
  openConnections: number;
  /** Client and upstream sockets open, handshakes included. */
  openSockets: number;
  /** Exchanges begun since the start (clients that named a destination). */
  totalConnections: number;
  allowed: number;
  denied: number;
  /** Bytes sent to and received from destinations, open exchanges included. */
  bytesUp: number;
  bytesDown: number;
}

export interface NetworkProxy {
  /**
   * Serves on a Unix socket at `path` (mode 0600). Refuses a path where anything exists (the proxy
   * never deletes a file it did not create) and a path longer than 107 bytes. The socket file is
   * removed when the proxy closes.
   */
  listenUnix(path: string): Promise<void>;
  /** Serves on a loopback address (default `127.0.0.1`, port 0: any free port). Resolves with the bound port. */
  listenTcp(options?: { host?: string; port?: number }): Promise<number>;
  /**
   * Stops listening, withdraws open questions, resets every client and upstream socket, and resolves
   * once all are closed and every exchange has been reported. Later calls return the same promise.
   */
  close(): Promise<void>;
  /** Calls `listener` once per exchange when it ends. Returns the function that unsubscribes it. */
  onConnection(listener: (event: NetworkConnectionEvent) => void): () => void;
  /** The exchanges in progress. */
  connections(): OpenConnection[];
  readonly stats: NetworkProxyStats;
  /** Replaces the lists (validated first); answers remembered for the session are kept. */
  setPolicy(policy: NetworkPolicy): void;
}

/** The longest Unix socket path: `sun_path` holds 108 bytes including the terminating NUL. */
export const MAX_UNIX_SOCKET_PATH_BYTES = 107;

const defaultResolve: ResolveHost = async (host) =>
  (await lookup(host, { all: true })).map((entry) => entry.address);

/**
 * Creates the proxy. It listens once `listenUnix`/`listenTcp` is called; every listener serves SOCKS5
 * and HTTP (told apart by the first byte).
 */
export function createNetworkProxy(options: NetworkProxyOptions): NetworkProxy {
  return new NetworkProxyServer(options);
}

class NetworkProxyServer implements NetworkProxy, ProxyContext {
  readonly #servers = new Set<Server>();
  readonly #sockets = new Set<Socket>();
  readonly #records = new Set<ConnectionRecord>();
  readonly #listeners = new Set<(event: NetworkConnectionEvent) => void>();
  readonly #handshakes = new WeakMap<Socket, NodeJS.Timeout>();
  readonly #shutdown = new AbortController();
  readonly #decider: ReturnType<typeof createNetworkDecider>;
  readonly #http: HttpServer;
  readonly #resolve: ResolveHost;
  readonly #allowLocal: boolean;
  readonly #connectTimeoutMs: number;
  readonly #handshakeTimeoutMs: number;
  readonly #canAsk: boolean;
  readonly #totals = { totalConnections: 0, allowed: 0, denied: 0, bytesUp: 0, bytesDown: 0 };
  #nextId = 1;
  #closing: Promise<void> | undefined;
  #drained: (() => void) | undefined;

  constructor(options: NetworkProxyOptions) {
    if (options === null || typeof options !== 'object')
      throw new NetworkProxyError({
        reason: 'invalid_option',
        message: 'createNetworkProxy needs options with a policy',
      });
    this.#decider = createNetworkDecider({
      policy: compileDomainPolicy(options.policy),
      ...(options.ask ? { ask: options.ask } : {}),
    });
    this.#canAsk = typeof options.ask === 'function';
    this.#resolve = options.resolve ?? defaultResolve;
    this.#allowLocal = options.allowLocalAddresses === true;
    this.#connectTimeoutMs = positive('connectTimeoutMs', options.connectTimeoutMs, 10_000);
    this.#handshakeTimeoutMs = positive('handshakeTimeoutMs', options.handshakeTimeoutMs, 30_000);
    this.#http = createHttpFrontEnd(this);
  }

  // --- NetworkProxy -------------------------------------------------------------------------------

  async listenUnix(path: string): Promise<void> {
    this.#refuseIfClosed();
    if (typeof path !== 'string' || path.length === 0)
      throw new NetworkProxyError({ reason: 'invalid_option', message: 'listenUnix needs a socket path' });
    const bytes = Buffer.byteLength(path);
    if (bytes > MAX_UNIX_SOCKET_PATH_BYTES)
      throw new NetworkProxyError({
        reason: 'socket_path_too_long',
        message: `the proxy socket path is ${bytes} bytes long; a Unix socket path holds at most ${MAX_UNIX_SOCKET_PATH_BYTES} (choose a shorter directory, e.g. under /tmp): ${path}`,
        path,
      });
    if (exists(path))
      throw new NetworkProxyError({
        reason: 'socket_path_exists',
        message: `cannot listen on ${path}: something already exists there (the proxy does not remove it); choose a new path`,
        path,
      });
    await this.#listen({ path }, path);
    chmodSync(path, 0o600);
  }

  async listenTcp(options: { host?: string; port?: number } = {}): Promise<number> {
    this.#refuseIfClosed();
    const host = options.host ?? '127.0.0.1';
    const port = options.port ?? 0;
    if (!isLoopback(host))
      throw new NetworkProxyError({
        reason: 'invalid_option',
        message: `the proxy listens on loopback only (127.0.0.1, ::1, localhost), not ${JSON.stringify(host)}: anyone who reaches it can use the host's network`,
      });
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new NetworkProxyError({
        reason: 'invalid_option',
        message: `listenTcp: port must be a number from 0 (any free port) to 65535, got ${JSON.stringify(port)}`,
      });
    const server = await this.#listen({ host, port }, `${host}:${port}`);
    return (server.address() as AddressInfo).port;
  }

  close(): Promise<void> {
    this.#closing ??= this.#shutdownAll();
    return this.#closing;
  }

  onConnection(listener: (event: NetworkConnectionEvent) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  connections(): OpenConnection[] {
    return [...this.#records].map((record) => record.snapshot());
  }

  get stats(): NetworkProxyStats {
    let bytesUp = this.#totals.bytesUp;
    let bytesDown = this.#totals.bytesDown;
    for (const record of this.#records) {
      bytesUp += record.upstream?.bytesWritten ?? 0;
      bytesDown += record.upstream?.bytesRead ?? 0;
    }
    return {
      openConnections: this.#records.size,
      openSockets: this.#sockets.size,
      totalConnections: this.#totals.totalConnections,
      allowed: this.#totals.allowed,
      denied: this.#totals.denied,
      bytesUp,
      bytesDown,
    };
  }

  setPolicy(policy: NetworkPolicy): void {
    this.#decider.setPolicy(compileDomainPolicy(policy));
  }

  // --- ProxyContext -------------------------------------------------------------------------------

  begin(target: ProxyTarget, protocol: ProxyProtocol): ConnectionRecord {
    this.#totals.totalConnections += 1;
    const record = new ConnectionRecord(this.#nextId++, target.host, target.port, protocol, (event) => {
      this.#records.delete(record);
      this.#totals.bytesUp += event.bytesUp;
      this.#totals.bytesDown += event.bytesDown;
      for (const listener of this.#listeners) {
        try {
          listener(event);
        } catch {
          // A listener's failure is its own; the proxy keeps serving.
        }
      }
      this.#checkDrained();
    });
    this.#records.add(record);
    return record;
  }

  async establish(record: ConnectionRecord, clientGone: AbortSignal): Promise<EstablishOutcome> {
    const controller = new AbortController();
    const abort = () => controller.abort();
    clientGone.addEventListener('abort', abort, { once: true });
    this.#shutdown.signal.addEventListener('abort', abort, { once: true });
    if (clientGone.aborted || this.#shutdown.signal.aborted) controller.abort();
    try {
      return await this.#establish(record, controller.signal);
    } finally {
      clientGone.removeEventListener('abort', abort);
      this.#shutdown.signal.removeEventListener('abort', abort);
    }
  }

  handshakeDone(socket: Socket): void {
    const timer = this.#handshakes.get(socket);
    if (timer) {
      clearTimeout(timer);
      this.#handshakes.delete(socket);
    }
  }

  // --- inside -------------------------------------------------------------------------------------

  /** Counts a refusal and words it for the client. */
  #denied(
    record: ConnectionRecord,
    why: Pick<DenialDescription, 'denial' | 'pattern' | 'detail'>,
  ): EstablishOutcome {
    this.#totals.denied += 1;
    const description: DenialDescription = {
      host: record.host.host,
      kind: record.host.kind,
      ...why,
      canAsk: this.#canAsk,
    };
    return {
      kind: 'denied',
      message: describeDenial(description),
      brief: briefDenial(description),
      denial: why.denial,
      host: record.host.host,
    };
  }

  async #establish(record: ConnectionRecord, signal: AbortSignal): Promise<EstablishOutcome> {
    const target = { host: record.host, port: record.port };
    const verdict = await this.#decider.decide(target, record.protocol, signal);
    record.decision = verdict.decision;
    record.decidedBy = verdict.decidedBy;
    if (!verdict.allowed) {
      record.denial = verdict.denial;
      if (verdict.denial === 'cancelled') return { kind: 'cancelled' };
      return this.#denied(record, {
        denial: verdict.denial,
        ...(verdict.pattern ? { pattern: verdict.pattern } : {}),
        ...(verdict.detail ? { detail: verdict.detail } : {}),
      });
    }
    const cancelled = (): EstablishOutcome => {
      record.error ??= 'the client went away (or the proxy closed) before the connection was made';
      return { kind: 'cancelled' };
    };
    if (signal.aborted) return cancelled();
    try {
      const { socket, address } = await connectUpstream(target, {
        resolve: this.#resolve,
        allowLocal: this.#allowLocal || verdict.explicit,
        timeoutMs: this.#connectTimeoutMs,
        signal,
        track: (socket) => this.#track(socket),
      });
      if (signal.aborted) {
        socket.destroy();
        return cancelled();
      }
      record.address = address;
      record.upstream = socket;
      this.#totals.allowed += 1;
      return { kind: 'connected', socket };
    } catch (error) {
      if (signal.aborted) return cancelled();
      const failure = UpstreamError.isInstance(error)
        ? error
        : new UpstreamError('failed', `could not connect: ${String(error)}`);
      if (failure.failure === 'local_address') {
        record.decision = verdict.decision === 'allowed' ? 'denied' : 'asked_denied';
        record.denial = 'local_address';
        return this.#denied(record, { denial: 'local_address', detail: failure.message });
      }
      record.error = failure.message;
      return { kind: 'failed', error: failure };
    }
  }

  #accept(socket: Socket): void {
    this.#track(socket);
    if (this.#closing) {
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    const timer = setTimeout(() => socket.destroy(), this.#handshakeTimeoutMs);
    this.#handshakes.set(socket, timer);
    socket.once('close', () => this.handshakeDone(socket));
    // Closed before a single byte: nothing to serve.
    const onEnd = () => socket.destroy();
    socket.once('end', onEnd);
    socket.once('data', (chunk: Buffer) => {
      socket.off('end', onEnd);
      socket.pause();
      if (chunk[0] === 0x05) serveSocks5(socket, chunk, this);
      // SOCKS4: "request rejected or failed", in its own reply format.
      else if (chunk[0] === 0x04) endAndLinger(socket, Buffer.from([0x00, 0x5b, 0, 0, 0, 0, 0, 0]));
      else {
        socket.unshift(chunk);
        this.#http.emit('connection', socket);
        socket.resume();
      }
    });
  }

  #track(socket: Socket): void {
    this.#sockets.add(socket);
    // Errors end the socket; whoever uses it learns from its close. Never an uncaught exception.
    socket.on('error', () => {});
    socket.once('close', () => {
      this.#sockets.delete(socket);
      this.#checkDrained();
    });
  }

  #checkDrained(): void {
    if (this.#drained && this.#sockets.size === 0 && this.#records.size === 0) this.#drained();
  }

  #refuseIfClosed(): void {
    if (this.#closing)
      throw new NetworkProxyError({ reason: 'closed', message: 'the network proxy is closed' });
  }

  #listen(address: { path: string } | { host: string; port: number }, where: string): Promise<Server> {
    const server = createServer({ allowHalfOpen: true }, (socket) => this.#accept(socket));
    return new Promise((resolve, reject) => {
      const onError = (error: NodeJS.ErrnoException) => {
        const inUse = error.code === 'EADDRINUSE';
        reject(
          new NetworkProxyError(
            {
              reason: inUse && 'path' in address ? 'socket_path_exists' : 'listen_failed',
              message: `the network proxy cannot listen on ${where}: ${error.message}`,
              ...('path' in address ? { path: address.path } : {}),
            },
            { cause: error },
          ),
        );
      };
      server.once('error', onError);
      server.listen(address, () => {
        server.off('error', onError);
        // Accept errors (EMFILE) must not take the host process down; the client just is not served.
        server.on('error', () => {});
        if (this.#closing) {
          server.close();
          reject(new NetworkProxyError({ reason: 'closed', message: 'the network proxy is closed' }));
          return;
        }
        this.#servers.add(server);
        resolve(server);
      });
    });
  }

  async #shutdownAll(): Promise<void> {
    this.#shutdown.abort();
    const servers = [...this.#servers].map(
      (server) => new Promise<void>((resolve) => server.close(() => resolve())),
    );
    this.#servers.clear();
    // Resets, not ends: a transfer cut short by the shutdown must not look complete to the client.
    for (const socket of this.#sockets) resetAndDestroy(socket);
    const drained = new Promise<void>((resolve) => {
      this.#drained = resolve;
    });
    this.#checkDrained();
    await Promise.all([...servers, drained]);
    this.#http.close();
  }
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value === 'number' && Number.isFinite(value) && value > 0) return value;
  throw new NetworkProxyError({
    reason: 'invalid_option',
    message: `${name} must be a positive number of milliseconds, got ${JSON.stringify(value)}`,
  });
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new NetworkProxyError(
      { reason: 'listen_failed', message: `cannot check ${path}: ${(error as Error).message}`, path },
      { cause: error },
    );
  }
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}
