/** Error codes of the exec-server protocol (JSON-RPC codes plus the server's own). */
export const WireErrorCode = {
  /** Unparseable line or bad envelope (answered with id -1), calls before the handshake, unknown process ids. */
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  /** Wrong or missing params, bad URIs, empty argv, empty writeId, bad base64. */
  InvalidParams: -32602,
  /** Spawn failures and other server-side faults. */
  InternalError: -32603,
  /** fs methods on missing paths. */
  NotFound: -32004,
  /** `resumeSessionId` names a session that is attached elsewhere. */
  SessionAlreadyAttached: -32010,
  /** Produced by clients when the transport closes, never sent by a server. */
  TransportClosed: -32000,
} as const;
export type WireErrorCode = (typeof WireErrorCode)[keyof typeof WireErrorCode];
