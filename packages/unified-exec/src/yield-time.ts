import {
  DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS,
  EXEC_COMMAND_DEFAULT_YIELD_TIME_MS,
  MAX_YIELD_TIME_MS,
  MIN_EMPTY_YIELD_TIME_MS,
  MIN_YIELD_TIME_MS,
  WRITE_STDIN_DEFAULT_YIELD_TIME_MS,
} from '@ux/protocol/core';

const clamp = (value: number, min: number, max: number) => Math.min(Math.max(value, min), max);

/** `exec_command`: 250–30000 ms, default 10000. */
export function execCommandYieldMs(requested: number | undefined): number {
  return clamp(requested ?? EXEC_COMMAND_DEFAULT_YIELD_TIME_MS, MIN_YIELD_TIME_MS, MAX_YIELD_TIME_MS);
}

/**
 * `write_stdin`: at least 250 ms; after a write at most 30000 ms; an empty poll waits 5000 ms up to the
 * background-terminal ceiling (default 300000 ms, never below 5000).
 */
export function writeStdinYieldMs(
  requested: number | undefined,
  poll: boolean,
  maxBackgroundMs = DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS,
): number {
  const floor = Math.max(requested ?? WRITE_STDIN_DEFAULT_YIELD_TIME_MS, MIN_YIELD_TIME_MS);
  if (!poll) return Math.min(floor, MAX_YIELD_TIME_MS);
  return clamp(floor, MIN_EMPTY_YIELD_TIME_MS, Math.max(maxBackgroundMs, MIN_EMPTY_YIELD_TIME_MS));
}
