import type { SandboxNotice } from '@ux/protocol/core';

/**
 * What the sandboxes of one command reported (a protected path it created and the host took away),
 * over every attempt: a denied first attempt's notices are not lost when a second attempt runs.
 * Receipts show each notice once; listeners (events) see every notice, earlier ones on subscribing.
 */
export class SandboxNotices {
  private readonly all: SandboxNotice[] = [];
  private reported = 0;
  private readonly listeners = new Set<(notice: SandboxNotice) => void>();

  add(notice: SandboxNotice): void {
    this.all.push(notice);
    for (const listener of this.listeners) listener(notice);
  }

  onNotice(listener: (notice: SandboxNotice) => void): () => void {
    for (const notice of this.all) listener(notice);
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
