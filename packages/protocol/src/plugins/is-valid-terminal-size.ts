import { InvalidArgumentsError } from '../errors/errors.js';
import type { TerminalSize } from './spawner.js';

/** What a terminal size must be, as every spawner says it. */
export const TERMINAL_SIZE_RULE = 'rows and cols must be whole numbers from 1 to 10000';

/** Whether a PTY size is something a terminal can have: whole rows and columns from 1 to 10000. */
export function isValidTerminalSize(size: TerminalSize): boolean {
  return [size.rows, size.cols].every((n) => Number.isInteger(n) && n >= 1 && n <= 10_000);
}

/** A live terminal's resize: throws `InvalidArgumentsError` (tool `resize`) for a size no terminal has. */
export function checkResizeSize(size: TerminalSize): void {
  if (!isValidTerminalSize(size)) {
    throw new InvalidArgumentsError({
      tool: 'resize',
      issues: [{ path: 'size', message: TERMINAL_SIZE_RULE }],
    });
  }
}
