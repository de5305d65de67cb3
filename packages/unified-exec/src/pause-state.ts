/**
 * The session's pause flag: while a client-side question (an elicitation) is open, yield clocks stop,
 * so a command's wait does not run out while the user is answering something else.
 */
export class PauseState {
  private paused = false;
  private since = 0;
  // Listeners, not a shared promise: a wait loop that raced a promise pending for the session's life
  // left a reaction on it every turn (a leak of about a quarter of a chatty terminal's output).
  private readonly listeners = new Set<() => void>();

  get isPaused(): boolean {
    return this.paused;
  }

  set(paused: boolean): void {
    if (paused === this.paused) return;
    this.paused = paused;
    if (paused) this.since = Date.now();
    for (const listener of this.listeners) listener();
  }

  /** Calls `listener` at every change of the flag; returns the unsubscribe function. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Milliseconds paused so far in the current pause (0 when not paused). */
  pausedFor(): number {
    return this.paused ? Date.now() - this.since : 0;
  }
}
