/** The calls under way: one abort for all of them (`interrupt`, `shutdown`), and a wait for them to answer. */
export interface CallTracker {
  /** A signal for one call: aborted by the call's own signal or by `abortAll()`. */
  callSignal(signal: AbortSignal | undefined): { signal: AbortSignal; done(): void };
  /** Aborts every call that is waiting; kills nothing. */
  abortAll(): void;
  /** Counts `call` as under way until it settles; returns it. */
  track<T>(call: Promise<T>): Promise<T>;
  /** Resolves once every call under way has answered. */
  settled(): Promise<void>;
}

export function createCallTracker(): CallTracker {
  const inFlight = new Set<AbortController>();
  const running = new Set<Promise<unknown>>();
  return {
    callSignal(signal) {
      const controller = new AbortController();
      inFlight.add(controller);
      return {
        signal: signal ? AbortSignal.any([signal, controller.signal]) : controller.signal,
        done: () => inFlight.delete(controller),
      };
    },
    abortAll() {
      for (const controller of inFlight) controller.abort();
      inFlight.clear();
    },
    async track(call) {
      running.add(call);
      try {
        return await call;
      } finally {
        running.delete(call);
      }
    },
    async settled() {
      await Promise.allSettled(running);
    },
  };
}
