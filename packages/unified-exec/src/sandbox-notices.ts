import type { SandboxNotice } from '@ux/protocol/core';

/**
 * What the sandboxes of one command reported (a protected path it created and the host took away),
 * over every attempt: a denied first attempt's notices are not lost when a second attempt runs.
 * Receipts show each notice once; listeners (events) see every notice, earlier ones on subscribing.
 */
export class SandboxNotices {
  private readonly all: { message: string }[] = [];
  private reported = 0;
  private readonly listeners = new Set<(notice: SandboxNotice) => void>();

  add(notice: SandboxNotice): void {
    this.all.push(notice);
    for (const listener of this.listeners) listener(notice);
  }

  /**
   * A line for the next receipt that is not a backend's notice (how the command came to run, such as
   * a rerun without the sandbox); listeners do not see it.
   */
  note(message: string): void {
    this.all.push({ message });
  }

  onNotice(listener: (notice: SandboxNotice) => void): () => void {
    for (const notice of this.all) if ('kind' in notice) listener(notice as SandboxNotice);
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** The messages no receipt has shown yet. */
  takeUnreported(): string[] {
    const fresh = this.all.slice(this.reported).map((notice) => notice.message);
    this.reported = this.all.length;
    return fresh;
  }
}
