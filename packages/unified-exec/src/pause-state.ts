/**
 * The session's pause flag: while a client-side question (an elicitation) is open, yield clocks stop,
 * so a command's wait does not run out while the user is answering something else.
 */
export class PauseState {
  private paused = false;
  private since = 0;
  // One shared promise for "the next change", so waiters that give up leave nothing behind.
  private next: Promise<void> | undefined;
  private resolveNext: (() => void) | undefined;

  get isPaused(): boolean {
    return this.paused;
  }

  set(paused: boolean): void {
    if (paused === this.paused) return;
    this.paused = paused;
    if (paused) this.since = Date.now();
    const resolve = this.resolveNext;
    this.next = undefined;
    this.resolveNext = undefined;
    resolve?.();
  }

  /** Resolves at the next change of the flag. */
  changed(): Promise<void> {
    this.next ??= new Promise((resolve) => {
      this.resolveNext = resolve;
    });
    return this.next;
  }

  /** Milliseconds paused so far in the current pause (0 when not paused). */
  pausedFor(): number {
    return this.paused ? Date.now() - this.since : 0;
  }
}
