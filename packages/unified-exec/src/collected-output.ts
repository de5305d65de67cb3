import { HeadTailBuffer } from '@ux/spawn';
import { APPROX_BYTES_PER_TOKEN, formattedTruncate } from './truncate-output.js';
import { utf8BoundaryAtOrAfter, utf8BoundaryAtOrBefore } from './utf8-boundary.js';

/** What one call keeps of the output it collects: all of it up to 2 MiB, beyond that head and tail. */
export const COLLECTED_KEEP_BYTES = 2 * 1024 * 1024;

const decoder = () => new TextDecoder();

/**
 * The output one tool call collected, kept in bounded memory: a call that drains 256 MiB holds 2 MiB.
 * It counts bytes and lines as they pass, so the token count and the "Total output lines" header are
 * those of everything collected, exactly as if it had all been kept.
 */
export class CollectedOutput {
  private readonly kept = new HeadTailBuffer(COLLECTED_KEEP_BYTES);
  private bytes = 0;
  private newlines = 0;
  private endsWithNewline = false;

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.kept.push(chunk);
    this.bytes += chunk.length;
    for (let at = chunk.indexOf(10); at !== -1; at = chunk.indexOf(10, at + 1)) this.newlines++;
    this.endsWithNewline = chunk[chunk.length - 1] === 10;
  }

  get byteLength(): number {
    return this.bytes;
  }

  /** `ceil(bytes / 4)` over everything collected. */
  get tokenCount(): number {
    return Math.ceil(this.bytes / APPROX_BYTES_PER_TOKEN);
  }

  get complete(): boolean {
    return this.kept.omittedBytes === 0;
  }

  /** Everything, when it was all kept; otherwise head, a marker and tail. */
  text(): string {
    if (this.complete) return decoder().decode(this.kept.snapshot());
    return this.assemble(COLLECTED_KEEP_BYTES / 2, COLLECTED_KEEP_BYTES / 2, this.kept.omittedBytes);
  }

  /** The model's view under a token budget (spec §3.9), the same as `formattedTruncate` of the whole. */
  truncated(maxTokens: number): string {
    if (this.complete) return formattedTruncate(this.text(), maxTokens);
    const budget = Math.max(0, maxTokens) * APPROX_BYTES_PER_TOKEN;
    const left = Math.floor(budget / 2);
    const cutTokens = Math.ceil((this.bytes - budget) / APPROX_BYTES_PER_TOKEN);
    return `Total output lines: ${this.lines}\n\n${this.assemble(left, budget - left, undefined, cutTokens)}`;
  }

  private get lines(): number {
    return this.bytes === 0 ? 0 : this.newlines + (this.endsWithNewline ? 0 : 1);
  }

  /** Up to `headBytes` of the head and `tailBytes` of the tail, cut at characters, with a marker between. */
  private assemble(headBytes: number, tailBytes: number, omittedBytes?: number, cutTokens?: number): string {
    const all = this.kept.snapshot();
    const half = COLLECTED_KEEP_BYTES / 2;
    const head = all.subarray(0, utf8BoundaryAtOrBefore(all, Math.min(headBytes, half)));
    const tailFrom = all.length - Math.min(tailBytes, all.length - half);
    const tail = all.subarray(utf8BoundaryAtOrAfter(all, tailFrom));
    const tokens = cutTokens ?? Math.ceil((omittedBytes ?? 0) / APPROX_BYTES_PER_TOKEN);
    return `${decoder().decode(head)}…${tokens} tokens truncated…${decoder().decode(tail)}`;
  }
}
