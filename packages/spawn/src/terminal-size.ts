import type { TerminalSize } from '@ux/protocol/core';

/** Whether a PTY size is something a terminal can have. */
export function validSize(size: TerminalSize): boolean {
  return [size.rows, size.cols].every((n) => Number.isInteger(n) && n >= 1 && n <= 10_000);
}
