const isContinuation = (byte: number) => (byte & 0xc0) === 0x80;

/**
 * How many bytes of `bytes` (at most `max`) can be sent without cutting a character in two. Bytes that
 * are not UTF-8 pass through as they are; only a multi-byte sequence that is incomplete at the cut is
 * held back. Returns 0 when everything left is the start of one incomplete character (wait for more).
 */
export function utf8SafeLength(bytes: Uint8Array, max: number): number {
  const limit = Math.min(bytes.length, max);
  if (limit === 0) return 0;
  let lead = limit - 1;
  for (let back = 0; back < 3 && lead > 0 && isContinuation(bytes[lead]!); back++) lead--;
  const byte = bytes[lead]!;
  if (isContinuation(byte)) return limit;
  const needed = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
  return needed <= limit - lead ? limit : lead;
}

/** The nearest character start at or before `index` (clamped to the bytes). */
export function utf8BoundaryAtOrBefore(bytes: Uint8Array, index: number): number {
  let i = Math.min(index, bytes.length);
  while (i > 0 && i < bytes.length && isContinuation(bytes[i]!)) i--;
  return i;
}

/** The nearest character start at or after `index` (clamped to the bytes). */
export function utf8BoundaryAtOrAfter(bytes: Uint8Array, index: number): number {
  let i = Math.max(0, index);
  while (i < bytes.length && isContinuation(bytes[i]!)) i++;
  return i;
}
