/** A one-shot timer whose clock can stop and go on: only the time it ran counts towards `ms`. */
export class PausableTimer {
  private remaining: number;
  private startedAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private done = false;

  constructor(
    ms: number,
    private readonly fire: () => void,
  ) {
    this.remaining = ms;
    this.run();
  }

  setPaused(paused: boolean): void {
    if (this.done) return;
    if (paused && this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.remaining -= Date.now() - this.startedAt;
    } else if (!paused && !this.timer) this.run();
  }

  clear(): void {
    this.done = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private run(): void {
    this.startedAt = Date.now();
    this.timer = setTimeout(
      () => {
        this.done = true;
        this.timer = undefined;
        this.fire();
      },
      Math.max(0, this.remaining),
    );
  }
}
