import type { Entry } from './door-context.js';

export interface ProcessInfo {
  sessionId: number;
  command: string[];
  cwd: string;
  /** `local`, or the remote environment it runs in. */
  environment: string;
  tty: boolean;
  running: boolean;
  sandbox: string;
  /** The `exec_command` call that started it (its output deltas carry this id). */
  callId: string;
  /** When it started (ms since the epoch). */
  startedAt: number;
  /** When it last printed (ms since the epoch); absent: nothing yet. */
  lastOutputAt?: number;
  /** Its exit code once it has exited. */
  exitCode?: number;
  /** The last few lines of its latest output (at most `LAST_OUTPUT_LINES`), as printed. */
  lastLines: string[];
  /** The last of `lastLines` is not ended yet (no newline after it: a prompt, say). */
  lastLineOpen?: boolean;
  /** Its foreground process is blocked reading its terminal or stdin (when the platform can tell). */
  waitingForInput?: boolean;
}

/** How many of a session's last output lines `processes()` reports. */
export const LAST_OUTPUT_LINES = 5;

/** What `processes()` reports of one stored process. */
export function processInfo(entry: Entry): ProcessInfo {
  const status = entry.launched.process.exitStatus();
  const lastOutputAt = entry.stream.lastOutputAt;
  return {
    sessionId: entry.id,
    command: entry.command,
    cwd: entry.cwd,
    environment: entry.environment,
    tty: entry.tty,
    running: status === undefined,
    sandbox: entry.launched.sandboxType,
    callId: entry.callId,
    startedAt: entry.startedAt,
    ...(lastOutputAt === undefined ? {} : { lastOutputAt }),
    ...(status === undefined ? {} : { exitCode: status.exitCode }),
    lastLines: entry.stream.lastLines(LAST_OUTPUT_LINES),
    ...(entry.stream.lastLineOpen ? { lastLineOpen: true } : {}),
    ...waitingField(entry),
  };
}

/** `waitingForInput` of a stored process, when its spawner can tell (false once it has exited). */
export function waitingField(entry: Entry): { waitingForInput?: boolean } {
  const { process } = entry.launched;
  if (typeof process.waitingForInput !== 'function') return {};
  if (entry.hasExited()) return { waitingForInput: false };
  const waiting = process.waitingForInput();
  return waiting === undefined ? {} : { waitingForInput: waiting };
}
