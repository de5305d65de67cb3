/** How long after spawn an exit still counts as "early" and is checked for a sandbox denial. */
export const EARLY_EXIT_GRACE_PERIOD_MS = 150;
/** After an early exit, how long to wait for one more piece of output before judging it. */
export const EARLY_EXIT_OUTPUT_SETTLE_MS = 20;
/** Cap of each process's head/tail output buffer (1 MiB): the first and last 512 KiB survive. */
export const UNIFIED_EXEC_OUTPUT_MAX_BYTES = 1024 * 1024;
/** Default PTY size. */
export const DEFAULT_PTY_SIZE = { rows: 24, cols: 80 } as const;
/** Largest single write accepted, and most bytes left queued for a child that does not read. */
export const MAX_STDIN_QUEUED_BYTES = 8 * 1024 * 1024;
/** The name the host reaper runs under (its `$0`), so process listings and leak checks can tell it apart. */
export const HOST_REAPER_NAME = 'ux-host-reaper';
/** After a PTY child exits, output must be quiet this long before the host lets go of the terminal. */
export const PTY_DRAIN_QUIET_MS = 15;
/** ...or this long after the exit, whichever comes first (background jobs may keep writing). */
export const PTY_DRAIN_MAX_MS = 100;
