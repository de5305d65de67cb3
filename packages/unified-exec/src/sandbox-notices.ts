import type { SandboxNotice } from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';

/**
 * What the sandboxes of one command reported (a protected path it created and the host took away),
 * over every attempt: a denied first attempt's notices are not lost when a second attempt runs.
 * Receipts show each notice once; listeners (events) see every notice, earlier ones on subscribing.
 *
 * A message quotes what the command chose (a path it created, its own words): whoever made it should
 * have escaped those parts (`readableText`); a message that still holds a control, bidi or zero-width
 * character is escaped whole here, so no notice can rewrite a terminal or forge a receipt line.
 * The structured fields (`path`, `movedTo`) stay as they are: they are data.
 */
export class SandboxNotices {
  private readonly all: { message: string }[] = [];
  private reported = 0;
  private readonly listeners = new Set<(notice: SandboxNotice) => void>();

  add(raw: SandboxNotice): void {
    const notice = { ...raw, message: readableText(raw.message) };
    this.all.push(notice);
    for (const listener of this.listeners) listener(notice);
  }

  /**
   * A line for the next receipt that is not a backend's notice (how the command came to run, such as
   * a rerun without the sandbox); listeners do not see it.
   */
  note(message: string): void {
    this.all.push({ message: readableText(message) });
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
