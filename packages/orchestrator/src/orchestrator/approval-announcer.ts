import type { ApprovalRequest } from '@ux/protocol/core';

/** Tells subscribers of every question put to the reviewer chain (`Orchestrator.onApprovalRequest`). */
export interface ApprovalAnnouncer {
  announce(request: ApprovalRequest): void;
  subscribe(listener: (request: ApprovalRequest) => void): () => void;
}

/**
 * Each listener gets its own copy (one cannot change what the next sees or what the chain is asked);
 * a listener that throws is reported as a warning and the others still run.
 */
export function createApprovalAnnouncer(onWarning?: (message: string) => void): ApprovalAnnouncer {
  const listeners = new Set<(request: ApprovalRequest) => void>();
  return {
    announce(request) {
      for (const listener of listeners) {
        try {
          listener(structuredClone(request));
        } catch (error) {
          onWarning?.(
            `an approval listener threw: ${error instanceof Error ? error.message : String(error)}`,
          );
        }
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
