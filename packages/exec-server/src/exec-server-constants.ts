/** Output read in one turn of the event loop is sent as one chunk of at most this size (larger messages
 * measured slower end to end: the client waits for a whole line before it can decode any of it). */
export const OUTPUT_CHUNK_MAX_BYTES = 32 * 1024;
/** Output kept per process for `process/read`: at most this many bytes… */
export const RETAINED_OUTPUT_MAX_BYTES = 1024 * 1024;
/** …and at most this many chunks (the older ones go first, seen by readers only as a seq gap). */
export const RETAINED_OUTPUT_MAX_CHUNKS = 50_000;
/** A closed process stays readable (and its id taken) this long. */
export const EXITED_PROCESS_RETENTION_MS = 30_000;
/** `writeId`s remembered per process for de-duplication. */
export const REMEMBERED_WRITE_IDS = 4096;
/** After an exit, how long to wait for the output to close before reporting the exit. */
export const EXIT_OUTPUT_SETTLE_MS = 20;
/** Largest incoming message (one line on stdio, one frame on WebSocket). */
export const MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/**
 * Back-pressure: when this many bytes wait to be written to a client, the session stops reading its
 * processes' output (their pipes fill and they block, as behind any slow reader)…
 */
export const OUTPUT_PAUSE_BYTES = 4 * 1024 * 1024;
/** …and reads again once the backlog is below this. */
export const OUTPUT_RESUME_BYTES = 1024 * 1024;
/**
 * Last resort for output that cannot be paused (a terminal): beyond this backlog, output notifications
 * are skipped. The output stays retained for `process/read`; the client sees a seq gap and reads it.
 * Responses and exit notifications are always sent.
 */
export const OUTPUT_NOTIFICATION_HIGH_WATER_BYTES = 64 * 1024 * 1024;
/** Longest `waitMs` honoured by `process/read`. */
export const MAX_READ_WAIT_MS = 300_000;
/** How long shutdown waits for killed processes to close before it lets go. */
export const SHUTDOWN_GRACE_MS = 3_000;
/** Longest wait for a sandbox's clean-up (its last notices) before a process is reported closed. */
export const SANDBOX_CLEANUP_MAX_MS = 2_000;
/** How long a shell snapshot's capture may take before the start falls back to the argv as given. */
export const SHELL_SNAPSHOT_TIMEOUT_MS = 5_000;
/** Shell snapshots kept (one per scope and shell); beyond this the least recently used one goes. */
export const MAX_SHELL_SNAPSHOTS = 256;
/** Largest file `fs/readFile` returns in one response (the wire carries base64 in one message). */
export const MAX_READ_FILE_BYTES = 32 * 1024 * 1024;
/** Most entries `fs/readDirectory` returns (the answer is one message; 64 MiB holds this many long names). */
export const MAX_DIRECTORY_ENTRIES = 100_000;
