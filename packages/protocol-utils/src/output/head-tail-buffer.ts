/**
 * A byte buffer capped at `maxBytes` that keeps the beginning and the end of a stream and drops the
 * middle. The first `floor(max / 2)` bytes ever pushed stay in the head; the rest of the budget holds
 * the most recent bytes. No marker is inserted into the bytes: `omittedBytes` and `omittedNewlines`
 * count what was dropped, and `parts()` gives head and tail apart so a consumer can mark the gap.
 * `pushGap` records bytes dropped before they got here (an upstream buffer's own gap): it closes the
 * head, so the gap stays between head and tail.
 */
/** Chunks smaller than this are copied into shared blocks, so chatty output does not pile up objects. */
const SMALL_CHUNK_BYTES = 4096;
const BLOCK_BYTES = 16 * 1024;

export class HeadTailBuffer {
  readonly maxBytes: number;
  private readonly headBudget: number;
  private readonly tailBudget: number;
  private head: Uint8Array[] = [];
  private headBytes = 0;
  private tail: Uint8Array[] = [];
  private tailBytes = 0;
  private omitted = 0;
  private omittedLines = 0;
  private headClosed = false;

  constructor(maxBytes: number) {
    if (!Number.isInteger(maxBytes) || maxBytes < 0)
      throw new RangeError(`maxBytes must be a non-negative integer, got ${maxBytes}`);
    this.maxBytes = maxBytes;
    this.headBudget = Math.floor(maxBytes / 2);
    this.tailBudget = maxBytes - this.headBudget;
  }

  get retainedBytes(): number {
    return this.headBytes + this.tailBytes;
  }

  get omittedBytes(): number {
    return this.omitted;
  }

  /** Newlines among the omitted bytes. */
  get omittedNewlines(): number {
    return this.omittedLines;
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    if (this.maxBytes === 0) {
      this.drop(chunk);
      return;
    }
    if (this.headClosed) {
      this.pushTail(chunk);
      return;
    }
    const room = this.headBudget - this.headBytes;
    if (room > 0) {
      if (chunk.length <= room) {
        append(this.head, chunk);
        this.headBytes += chunk.length;
        return;
      }
      append(this.head, chunk.subarray(0, room));
      this.headBytes += room;
      this.pushTail(chunk.subarray(room));
      return;
    }
    this.pushTail(chunk);
  }

  /** Records `bytes` (with `newlines` among them) dropped upstream; what comes after goes to the tail. */
  pushGap(bytes: number, newlines: number): void {
    if (bytes <= 0) return;
    this.omitted += bytes;
    this.omittedLines += newlines;
    this.headClosed = true;
  }

  private drop(bytes: Uint8Array): void {
    this.omitted += bytes.length;
    this.omittedLines += countNewlines(bytes);
  }

  private pushTail(chunk: Uint8Array): void {
    if (chunk.length >= this.tailBudget) {
      // The new chunk alone fills the tail: everything older in the tail is dropped.
      for (const old of this.tail) this.drop(old);
      this.drop(chunk.subarray(0, chunk.length - this.tailBudget));
      this.tail = this.tailBudget === 0 ? [] : [chunk.subarray(chunk.length - this.tailBudget)];
      this.tailBytes = this.tailBudget;
      return;
    }
    append(this.tail, chunk);
    this.tailBytes += chunk.length;
    let excess = this.tailBytes - this.tailBudget;
    while (excess > 0) {
      const oldest = this.tail[0]!;
      if (oldest.length <= excess) {
        this.tail.shift();
        this.tailBytes -= oldest.length;
        this.drop(oldest);
        excess -= oldest.length;
      } else {
        this.drop(oldest.subarray(0, excess));
        this.tail[0] = oldest.subarray(excess);
        this.tailBytes -= excess;
        excess = 0;
      }
    }
  }

  /** Head then tail, without changing the buffer. */
  snapshot(): Uint8Array {
    return concat([...this.head, ...this.tail], this.retainedBytes);
  }

  /** Head then tail, and empties the buffer (the omitted count restarts too). */
  drain(): Uint8Array {
    return concat(this.drainChunks());
  }

  /** Like `drain`, as the retained chunks themselves (no copy): for consumers that process pieces. */
  drainChunks(): Uint8Array[] {
    const { head, tail } = this.drainParts();
    return [...head, ...tail];
  }

  /** Head and tail apart (no copy) with what was dropped between them, without changing the buffer. */
  parts(): { head: Uint8Array[]; tail: Uint8Array[]; omittedBytes: number; omittedNewlines: number } {
    return {
      head: [...this.head],
      tail: [...this.tail],
      omittedBytes: this.omitted,
      omittedNewlines: this.omittedLines,
    };
  }

  /** `parts()`, and empties the buffer (the omitted counts restart too). */
  drainParts(): ReturnType<HeadTailBuffer['parts']> {
    const parts = this.parts();
    this.head = [];
    this.tail = [];
    this.headBytes = 0;
    this.tailBytes = 0;
    this.omitted = 0;
    this.omittedLines = 0;
    this.headClosed = false;
    return parts;
  }
}

/** Newlines in `bytes` (memchr speed: Buffer.indexOf over the same memory, no copy). */
function countNewlines(bytes: Uint8Array): number {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  let count = 0;
  for (let at = view.indexOf(10); at !== -1; at = view.indexOf(10, at + 1)) count++;
  return count;
}

/**
 * Adds a chunk to a list. A small chunk is copied into the last block when that block is one of ours
 * with room to spare (a view ending where its buffer's used part ends), else into a fresh block; the
 * caller's buffer is never written to.
 */
function append(list: Uint8Array[], chunk: Uint8Array): void {
  if (chunk.length >= SMALL_CHUNK_BYTES) {
    list.push(chunk);
    return;
  }
  const last = list[list.length - 1];
  const block = last && ownBlocks.get(last.buffer);
  if (
    last &&
    block &&
    last.byteOffset + last.length === block.used &&
    block.used + chunk.length <= block.bytes.length
  ) {
    block.bytes.set(chunk, block.used);
    block.used += chunk.length;
    list[list.length - 1] = block.bytes.subarray(last.byteOffset - block.bytes.byteOffset, block.used);
    return;
  }
  const bytes = new Uint8Array(BLOCK_BYTES);
  bytes.set(chunk, 0);
  ownBlocks.set(bytes.buffer, { bytes, used: chunk.length });
  list.push(bytes.subarray(0, chunk.length));
}

/** The blocks this module allocated, by their ArrayBuffer, with how much of each is in use. */
const ownBlocks = new WeakMap<ArrayBufferLike, { bytes: Uint8Array; used: number }>();

function concat(
  chunks: Uint8Array[],
  length = chunks.reduce((sum, chunk) => sum + chunk.length, 0),
): Uint8Array {
  if (chunks.length === 1) return chunks[0]!.slice();
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}
