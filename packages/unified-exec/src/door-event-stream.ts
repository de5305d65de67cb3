import type { NetworkAccessEvent, UxEvent } from '@ux/protocol/core';

/** How long the door remembers the network proxy's refusals, to name the denials of the waits they fell in. */
const PROXY_REFUSAL_MEMORY_MS = 10 * 60_000;
const PROXY_REFUSAL_MEMORY_COUNT = 200;

/** The door's one event stream: what every part emits, every listener reads. */
export interface DoorEventStream {
  emit(event: UxEvent): void;
  /** Subscribes; returns the unsubscribe function. */
  onEvent(listener: (event: UxEvent) => void): () => void;
  /** The network proxy's refusals (`network_access` events) since `since` (`Date.now()`), oldest first. */
  proxyRefusalsSince(since: number): NetworkAccessEvent[];
}

/**
 * The event stream. A listener that throws is reported through `onWarning` and does not stop the
 * others. The proxy's refusals (the host passes its events to `notify`) are kept a while with the
 * time they came: the receipt of a wait names a refusal that happened during it.
 */
export function createDoorEventStream(onWarning?: (message: string) => void): DoorEventStream {
  const listeners = new Set<(event: UxEvent) => void>();
  const proxyRefusals: { at: number; event: NetworkAccessEvent }[] = [];
  return {
    emit(event) {
      if (
        event.type === 'network_access' &&
        (event.decision === 'denied' || event.decision === 'asked_denied')
      ) {
        const now = Date.now();
        proxyRefusals.push({ at: now, event });
        while (
          proxyRefusals.length > PROXY_REFUSAL_MEMORY_COUNT ||
          (proxyRefusals[0] && proxyRefusals[0].at < now - PROXY_REFUSAL_MEMORY_MS)
        )
          proxyRefusals.shift();
      }
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (error) {
          onWarning?.(`an event listener threw: ${(error as Error).message}`);
        }
      }
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    proxyRefusalsSince: (since) =>
      proxyRefusals.filter((entry) => entry.at >= since).map((entry) => entry.event),
  };
}
