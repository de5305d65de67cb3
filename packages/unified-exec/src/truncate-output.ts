import { utf8BoundaryAtOrAfter, utf8BoundaryAtOrBefore } from './utf8-boundary.js';

/** Bytes per token, the approximation used for budgets and counts. */
export const APPROX_BYTES_PER_TOKEN = 4;

export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** `ceil(bytes / 4)`: the token count reported as "Original token count". */
export function approxTokenCount(text: string): number {
  return Math.ceil(byteLength(text) / APPROX_BYTES_PER_TOKEN);
}

/**
 * Keeps the beginning and the end of output that exceeds `maxTokens` (× 4 bytes), with a marker for
 * what was cut and the total line count in front (docs/reference/door.md §8). Never splits a character.
 */
export function formattedTruncate(text: string, maxTokens: number): string {
  const bytes = Buffer.from(text, 'utf8');
  const budget = Math.max(0, maxTokens) * APPROX_BYTES_PER_TOKEN;
  if (bytes.length <= budget) return text;
  const left = Math.floor(budget / 2);
  const right = budget - left;
  const headEnd = utf8BoundaryAtOrBefore(bytes, left);
  const tailStart = utf8BoundaryAtOrAfter(bytes, bytes.length - right);
  const cutTokens = Math.ceil((bytes.length - budget) / APPROX_BYTES_PER_TOKEN);
  const head = bytes.subarray(0, headEnd).toString('utf8');
  const tail = bytes.subarray(tailStart).toString('utf8');
  return `Total output lines: ${countLines(text)}\n\n${head}…${cutTokens} tokens truncated…${tail}`;
}

/** Lines as Rust's `str::lines` counts them: a final newline does not start another line. */
export function countLines(text: string): number {
  if (text === '') return 0;
  let lines = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lines++;
  return text.endsWith('\n') ? lines - 1 : lines;
}
