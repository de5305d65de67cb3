import { connect, isIP, type Socket } from 'node:net';
import { markError, UxError } from '@ux/protocol/core';
import { isLocalAddress } from './is-local-address.js';
import { formatHostPort, type NormalizedHost, normalizeHost } from './normalize-host.js';

/** Resolves a host name to IP addresses; the first that accepts a connection is used. */
export type ResolveHost = (host: string) => Promise<readonly string[]>;

export type UpstreamFailure =
  /** The name did not resolve (or resolved to nothing usable). */
  | 'resolve'
  /** Every address the name resolved to is local or private, and local addresses are not allowed. */
  | 'local_address'
  | 'refused'
  | 'network_unreachable'
  | 'host_unreachable'
  | 'timeout'
  | 'failed';

const UPSTREAM_CONNECT_FAILED = 'ux.error.upstream-connect';

/** Why no upstream connection could be made; `message` is written for the person behind the client. */
export class UpstreamError extends UxError {
  readonly failure: UpstreamFailure;
  /** The addresses tried, or the local ones refused. */
  readonly addresses: readonly string[];
  constructor(
    failure: UpstreamFailure,
    message: string,
    addresses: readonly string[] = [],
    options?: { cause?: unknown },
  ) {
    super('upstream_connect_failed', message, options);
    this.name = 'UpstreamError';
    this.failure = failure;
    this.addresses = addresses;
    markError(this, UPSTREAM_CONNECT_FAILED);
  }
  static override isInstance(error: unknown): error is UpstreamError {
    return UxError.hasMarker(error, UPSTREAM_CONNECT_FAILED);
  }
  override toJSON() {
    return { ...super.toJSON(), failure: this.failure, addresses: this.addresses };
  }
}

export interface ConnectUpstreamOptions {
  resolve: ResolveHost;
  /** Connect to loopback/private addresses a name resolves to. */
  allowLocal: boolean;
  /** Per address tried. */
  timeoutMs: number;
  /** Aborts resolution and connection attempts: the client went away or the proxy closes. */
  signal: AbortSignal;
  /** Called with every socket as soon as it exists, so the owner can destroy it on close. */
  track: (socket: Socket) => void;
}

/**
 * Resolves the host (an IP literal is its own address), drops local addresses unless allowed, and
 * connects to the addresses in order until one accepts. The socket is half-open capable, without
 * Nagle's delay. What is connected to is always an address the resolver returned for the decided
 * name: the client never picks the address.
 */
export async function connectUpstream(
  target: { host: NormalizedHost; port: number },
  options: ConnectUpstreamOptions,
): Promise<{ socket: Socket; address: string }> {
  const where = formatHostPort(target.host.host, target.port);
  let addresses: string[];
  if (target.host.kind !== 'name') addresses = [target.host.host];
  else {
    let resolved: readonly string[];
    try {
      resolved = await untilAborted(options.resolve(target.host.host), options.signal);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException)?.code;
      throw new UpstreamError(
        'resolve',
        `could not resolve "${target.host.host}"${code ? ` (${code})` : error instanceof Error ? `: ${error.message}` : ''}`,
      );
    }
    addresses = [];
    for (const address of Array.isArray(resolved) ? resolved : []) {
      if (typeof address !== 'string' || isIP(address) === 0) continue;
      const normalized = normalizeHost(address)?.host;
      if (normalized && !addresses.includes(normalized)) addresses.push(normalized);
    }
    if (addresses.length === 0)
      throw new UpstreamError('resolve', `could not resolve "${target.host.host}" (no addresses)`);
    if (!options.allowLocal) {
      const usable = addresses.filter((address) => !isLocalAddress(address));
      if (usable.length === 0)
        throw new UpstreamError(
          'local_address',
          `"${target.host.host}" resolves only to local or private addresses (${addresses.join(', ')})`,
          addresses,
        );
      addresses = usable;
    }
  }
  let last: UpstreamError | undefined;
  for (const address of addresses) {
    if (options.signal.aborted) break;
    try {
      return { socket: await attempt(address, target.port, options), address };
    } catch (error) {
      last = describeConnectError(error, where, address);
    }
  }
  throw last ?? new UpstreamError('failed', `could not connect to ${where}: cancelled`, addresses);
}

function attempt(address: string, port: number, options: ConnectUpstreamOptions): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: address, port, allowHalfOpen: true, noDelay: true });
    options.track(socket);
    const done = () => {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', onAbort);
      socket.off('connect', onConnect);
      socket.off('error', onError);
    };
    const onConnect = () => {
      done();
      resolve(socket);
    };
    const onError = (error: Error) => {
      done();
      socket.destroy();
      reject(error);
    };
    const onAbort = () => onError(Object.assign(new Error('cancelled'), { code: 'ABORTED' }));
    const timer = setTimeout(
      () =>
        onError(Object.assign(new Error(`no answer within ${options.timeoutMs} ms`), { code: 'ETIMEDOUT' })),
      options.timeoutMs,
    );
    socket.once('connect', onConnect);
    socket.once('error', onError);
    if (options.signal.aborted) onAbort();
    else options.signal.addEventListener('abort', onAbort, { once: true });
  });
}

function describeConnectError(error: unknown, where: string, address: string): UpstreamError {
  const code = (error as NodeJS.ErrnoException)?.code;
  const via = where.startsWith(`${address}:`) || where.startsWith(`[${address}]:`) ? '' : ` (${address})`;
  const say = (failure: UpstreamFailure, what: string) =>
    new UpstreamError(failure, `could not connect to ${where}${via}: ${what}`, [address]);
  switch (code) {
    case 'ECONNREFUSED':
      return say('refused', 'connection refused (ECONNREFUSED)');
    case 'ENETUNREACH':
      return say('network_unreachable', 'network unreachable (ENETUNREACH)');
    case 'EHOSTUNREACH':
    case 'EHOSTDOWN':
    case 'EADDRNOTAVAIL':
      return say('host_unreachable', `host unreachable (${code})`);
    case 'ETIMEDOUT':
      return say(
        'timeout',
        (error as Error).message === 'ETIMEDOUT' ? 'timed out' : `timed out: ${(error as Error).message}`,
      );
    default:
      return say('failed', code ? `${(error as Error).message}` : String((error as Error)?.message ?? error));
  }
}

/** `promise`, or a rejection as soon as `signal` aborts (a resolver that never answers holds nothing up). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('cancelled'));
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(new Error('cancelled'));
    signal.addEventListener('abort', onAbort, { once: true });
    Promise.resolve(promise).then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
