import { markError, UxError } from '@ux/protocol/core';

/**
 * Why the proxy refused a setting or a listener. A closed set, so a caller (the CLI reading a config
 * file) can point at the right place without reading message text.
 */
export type NetworkProxyErrorReason =
  /** A policy pattern is not a host name, an IP address or a `*.domain` pattern. */
  | 'invalid_pattern'
  /** Another option has a value the proxy cannot use (a port, a timeout, a non-loopback TCP host). */
  | 'invalid_option'
  /** `listenUnix` was given a path where something already exists; the proxy never deletes it. */
  | 'socket_path_exists'
  /** `listenUnix` was given a path longer than a Unix socket address holds (107 bytes). */
  | 'socket_path_too_long'
  /** The operating system refused to listen (missing directory, permissions, port in use). */
  | 'listen_failed'
  /** The proxy was closed; it does not listen again. */
  | 'closed';

export interface NetworkProxyErrorFields {
  reason: NetworkProxyErrorReason;
  message: string;
  /** The policy pattern at fault, as written. */
  pattern?: string;
  /** `network.allow` or `network.deny`, for `invalid_pattern`. */
  list?: 'allow' | 'deny';
  /** The socket path at fault. */
  path?: string;
}

const MARKER = 'ux.error.network-proxy';

/**
 * Every error the proxy throws to its owner. It is a `UxError` with code `config_error`: each of them
 * is about a setting the owner gave (a pattern, a path, an address), never about a sandboxed command's
 * traffic, which is answered on the wire (403, SOCKS reply codes) and reported in connection events.
 */
export class NetworkProxyError extends UxError {
  readonly reason: NetworkProxyErrorReason;
  readonly pattern: string | undefined;
  readonly list: 'allow' | 'deny' | undefined;
  readonly path: string | undefined;

  constructor(fields: NetworkProxyErrorFields, options?: { cause?: unknown }) {
    super('config_error', fields.message, options);
    this.name = 'NetworkProxyError';
    this.reason = fields.reason;
    this.pattern = fields.pattern;
    this.list = fields.list;
    this.path = fields.path;
    markError(this, MARKER);
  }

  static override isInstance(error: unknown): error is NetworkProxyError {
    return UxError.hasMarker(error, MARKER);
  }

  override toJSON(): Record<string, unknown> {
    return {
      ...super.toJSON(),
      reason: this.reason,
      pattern: this.pattern,
      list: this.list,
      path: this.path,
    };
  }
}
