import type { Socket } from 'node:net';
import type { UpstreamError } from './connect-upstream.js';
import type { ConnectionRecord } from './connection-record.js';
import type { DenialReason, ProxyProtocol } from './network-decider.js';
import type { ProxyTarget } from './parse-authority.js';

/** What deciding and connecting came to. */
export type EstablishOutcome =
  | { kind: 'connected'; socket: Socket }
  /**
   * Refused by the policy, an answer, or the local-address rule: `message` is the body for the client,
   * `brief` the host and reason in a few words (the status line's reason phrase), `denial` the code.
   */
  | { kind: 'denied'; message: string; brief: string; denial: DenialReason; host: string }
  /** Allowed, but the destination could not be reached. */
  | { kind: 'failed'; error: UpstreamError }
  /** The client went away, or the proxy is closing. */
  | { kind: 'cancelled' };

/** What the protocol front ends (SOCKS5, HTTP) use of the proxy. */
export interface ProxyContext {
  /** Starts the record of one exchange, once the client has named its destination. */
  begin(target: ProxyTarget, protocol: ProxyProtocol): ConnectionRecord;
  /** Decides the destination (asking if needed), resolves it and connects. `signal`: the client is gone. */
  establish(record: ConnectionRecord, signal: AbortSignal): Promise<EstablishOutcome>;
  /** The client got through its handshake (named a destination or sent a request): no more handshake timer. */
  handshakeDone(socket: Socket): void;
}
