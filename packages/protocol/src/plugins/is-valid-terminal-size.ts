import type { TerminalSize } from './spawner.js';

/** Whether a PTY size is something a terminal can have: whole rows and columns from 1 to 10000. */
export function isValidTerminalSize(size: TerminalSize): boolean {
  return [size.rows, size.cols].every((n) => Number.isInteger(n) && n >= 1 && n <= 10_000);
}
