import { HeadTailBuffer } from '@ux/spawn';
import { APPROX_BYTES_PER_TOKEN, formattedTruncate } from './truncate-output.js';
import { utf8BoundaryAtOrAfter, utf8BoundaryAtOrBefore } from './utf8-boundary.js';

/** What one call keeps of the output it collects: all of it up to 2 MiB, beyond that head and tail. */
export const COLLECTED_KEEP_BYTES = 2 * 1024 * 1024;

const decoder = () => new TextDecoder();

/**
 * The output one tool call collected, kept in bounded memory: a call that drains 256 MiB holds 2 MiB.
 * It counts bytes and lines as they pass, including what was dropped before it got here (the
 * process's own buffer overflowed between two polls: `pushGap`), so the token count and "Total output
 * lines" describe everything the process printed, and whatever is not shown is marked where it was.
 */
export class CollectedOutput {
  private readonly kept = new HeadTailBuffer(COLLECTED_KEEP_BYTES);
  private bytes = 0;
  private newlines = 0;
  private endsWithNewline = false;
  // `text()` decoded once: a receipt asks for it several times (the end event, the budget, the check).
  private textCache: string | undefined;

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.textCache = undefined;
    this.kept.push(chunk);
    this.bytes += chunk.length;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) this.newlines++;
    this.endsWithNewline = chunk[chunk.length - 1] === 10;
  }

  /** Records `bytes` of output (with `newlines` among them) that were dropped before this call saw them. */
  pushGap(bytes: number, newlines: number): void {
    if (bytes <= 0) return;
    this.textCache = undefined;
    this.kept.pushGap(bytes, newlines);
    this.bytes += bytes;
    this.newlines += newlines;
  }

  /** A buffer's drained parts: head, the gap between (if any), tail. */
  pushParts(parts: {
    head: Uint8Array[];
    tail: Uint8Array[];
    omittedBytes: number;
    omittedNewlines: number;
  }): void {
    for (const chunk of parts.head) this.push(chunk);
    this.pushGap(parts.omittedBytes, parts.omittedNewlines);
    for (const chunk of parts.tail) this.push(chunk);
  }

  /** Bytes of everything collected, shown or not. */
  get byteLength(): number {
    return this.bytes;
  }

  /** `ceil(bytes / 4)` over everything collected. */
  get tokenCount(): number {
    return Math.ceil(this.bytes / APPROX_BYTES_PER_TOKEN);
  }

  /** Lines of everything collected (a final newline does not start another). */
  get lineCount(): number {
    return this.bytes === 0 ? 0 : this.newlines + (this.endsWithNewline ? 0 : 1);
  }

  get complete(): boolean {
    return this.kept.omittedBytes === 0;
  }

  /** Everything, when it was all kept; otherwise what was kept with a marker where the rest was. */
  text(): string {
    this.textCache ??= this.complete
      ? this.bytes === 0
        ? ''
        : decoder().decode(this.kept.snapshot())
      : this.assemble(COLLECTED_KEEP_BYTES, COLLECTED_KEEP_BYTES);
    return this.textCache;
  }

  /**
   * The model's view under a token budget (docs/reference/door.md §8), the same as `formattedTruncate`
   * of the whole.
   */
  truncated(maxTokens: number): string {
    if (this.complete) return formattedTruncate(this.text(), maxTokens);
    const budget = Math.max(0, maxTokens) * APPROX_BYTES_PER_TOKEN;
    const left = Math.floor(budget / 2);
    return `Total output lines: ${this.lineCount}\n\n${this.assemble(left, budget - left)}`;
  }

  /**
   * Up to `headBytes` of the kept head and `tailBytes` of the kept tail, cut at characters, with a
   * marker for everything in between: what the budget leaves out and what was never kept.
   */
  private assemble(headBytes: number, tailBytes: number): string {
    const { head: headParts, tail: tailParts } = this.kept.parts();
    const headAll = Buffer.concat(headParts);
    const tailAll = Buffer.concat(tailParts);
    const head = headAll.subarray(0, utf8BoundaryAtOrBefore(headAll, Math.min(headBytes, headAll.length)));
    const tail = tailAll.subarray(utf8BoundaryAtOrAfter(tailAll, Math.max(0, tailAll.length - tailBytes)));
    const tokens = Math.ceil((this.bytes - head.length - tail.length) / APPROX_BYTES_PER_TOKEN);
    return `${decoder().decode(head)}…${tokens} tokens truncated…${decoder().decode(tail)}`;
  }
}
