import type { NetworkAccessEvent } from '@ux/protocol/core';
import type { NetworkConnectionEvent } from './connection-record.js';

/** The proxy's record of one exchange as the protocol's `network_access` event, for a door's listeners. */
export function networkAccessEvent(event: NetworkConnectionEvent): NetworkAccessEvent {
  return {
    type: 'network_access',
    host: event.host,
    port: event.port,
    protocol: event.protocol,
    decision: event.decision,
    decided_by: event.decidedBy,
    ...(event.denial ? { denial: event.denial } : {}),
    ...(event.address ? { address: event.address } : {}),
    bytes_up: event.bytesUp,
    bytes_down: event.bytesDown,
    duration_ms: Math.max(0, event.endedAt - event.startedAt),
    ...(event.error ? { error: event.error } : {}),
  };
}
