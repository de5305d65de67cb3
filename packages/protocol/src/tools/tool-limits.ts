/**
 * Defaults and bounds of the two tools (docs/reference/door.md §2, §4). The door applies them;
 * descriptions quote them.
 */
export const EXEC_COMMAND_DEFAULT_YIELD_TIME_MS = 10_000;
export const WRITE_STDIN_DEFAULT_YIELD_TIME_MS = 250;
export const MIN_YIELD_TIME_MS = 250;
/** Floor of an empty `write_stdin` poll. */
export const MIN_EMPTY_YIELD_TIME_MS = 5_000;
export const MAX_YIELD_TIME_MS = 30_000;
/** Ceiling of an empty `write_stdin` poll unless configured otherwise. */
export const DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS = 300_000;
export const DEFAULT_MAX_OUTPUT_TOKENS = 10_000;
/** Largest `session_id` (a signed 32-bit integer, as upstream). */
export const MAX_SESSION_ID = 2_147_483_647;
