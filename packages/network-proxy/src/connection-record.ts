import type { Socket } from 'node:net';
import type { ConnectionDecision, DecidedBy, DenialReason, ProxyProtocol } from './network-decider.js';
import type { NormalizedHost } from './normalize-host.js';

/**
 * One exchange through the proxy, reported once when it ends: a tunnel (HTTP CONNECT, SOCKS5
 * CONNECT, an HTTP upgrade) or one forwarded plain HTTP request. Clients that never named a
 * destination (garbage, a half handshake) are not reported.
 */
export interface NetworkConnectionEvent {
  /** Unique per proxy, in order of start. */
  id: number;
  /** Normalised: lower case, no trailing dot, punycode, canonical IP. */
  host: string;
  port: number;
  protocol: ProxyProtocol;
  decision: ConnectionDecision;
  /** The lists, an answer given for this connection's question, or an answer remembered for the session. */
  decidedBy: DecidedBy;
  /** Why it was refused, when it was. */
  denial?: DenialReason;
  /** The IP address connected to. */
  address?: string;
  /** Bytes the proxy sent to the destination (request heads included for plain HTTP). */
  bytesUp: number;
  /** Bytes the proxy received from the destination. */
  bytesDown: number;
  /** `Date.now()` when the client named the destination, and when the exchange ended. */
  startedAt: number;
  endedAt: number;
  /** The upstream failure (resolution, connection) or the error that ended the exchange. */
  error?: string;
}

/** An exchange still in progress, as `connections()` lists it. */
export type OpenConnection = Omit<NetworkConnectionEvent, 'endedAt' | 'decision' | 'decidedBy'> & {
  /** Absent while the decision is pending (a question is open). */
  decision?: ConnectionDecision;
  decidedBy?: DecidedBy;
};

export class ConnectionRecord {
  readonly startedAt = Date.now();
  decision: ConnectionDecision | undefined;
  decidedBy: DecidedBy | undefined;
  denial: DenialReason | undefined;
  address: string | undefined;
  upstream: Socket | undefined;
  error: string | undefined;
  #ended = false;

  constructor(
    readonly id: number,
    readonly host: NormalizedHost,
    readonly port: number,
    readonly protocol: ProxyProtocol,
    private readonly onEnd: (event: NetworkConnectionEvent) => void,
  ) {}

  get ended(): boolean {
    return this.#ended;
  }

  snapshot(): OpenConnection {
    return {
      id: this.id,
      host: this.host.host,
      port: this.port,
      protocol: this.protocol,
      ...(this.decision ? { decision: this.decision } : {}),
      ...(this.decidedBy ? { decidedBy: this.decidedBy } : {}),
      ...(this.denial ? { denial: this.denial } : {}),
      ...(this.address ? { address: this.address } : {}),
      bytesUp: this.upstream?.bytesWritten ?? 0,
      bytesDown: this.upstream?.bytesRead ?? 0,
      startedAt: this.startedAt,
      ...(this.error ? { error: this.error } : {}),
    };
  }

  /** Reports the exchange; later calls do nothing. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    const open = this.snapshot();
    this.onEnd({
      ...open,
      decision: this.decision ?? 'denied',
      decidedBy: this.decidedBy ?? 'policy',
      endedAt: Date.now(),
    });
  }
}
