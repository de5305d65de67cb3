import { readableText, type UxEvent } from '@ux/protocol/core';
import type { UnifiedExec } from '@ux/unified-exec';
import type { Terminal } from './terminal.js';

/** Ctrl-]: leaves the process running (as telnet and `docker attach` users expect a key to). */
export const DETACH_KEY = 0x1d;

export type AttachOutcome = { kind: 'exited'; exitCode: number } | { kind: 'detached' };

export interface AttachTarget {
  sessionId: number;
  /** The `exec_command` call that started it: its output deltas carry this id. */
  callId: string;
  /** Whether the process has a terminal (then every key goes to it; else only Ctrl-C, as SIGINT). */
  tty: boolean;
  /** When the command started (ms since the epoch), for the elapsed time shown at its end. */
  startedAt?: number;
  /** Keys typed before the attach (while the command was starting), sent first. */
  typedAhead?: string;
  /** Whether what was shown before left the cursor at the start of a line (default true). */
  atLineStart?: boolean;
  /** The caller showed `attachStatus` already (before the output that came first). */
  announced?: boolean;
}

/** The one-line status shown when a process is attached. */
export function attachStatus(target: Pick<AttachTarget, 'sessionId' | 'tty'>): string {
  return `[ux: running as session ${target.sessionId}; ${target.tty ? 'keys go to the process' : 'Ctrl-C interrupts it'}; Ctrl-] detaches]\n`;
}

/**
 * Streams a running process's output to the terminal and sends keystrokes through `write_stdin` until
 * the process ends or the person presses the detach key. Keys typed while a write is in flight are
 * sent together with the next one, in order.
 */
export async function attachSession(
  door: UnifiedExec,
  target: AttachTarget,
  terminal: Terminal,
): Promise<AttachOutcome> {
  const id = String(target.sessionId);
  // Whether the output left the cursor at the start of a line, so ux's closing line starts on its own.
  let atLineStart = target.atLineStart ?? true;
  let finish!: (outcome: AttachOutcome) => void;
  const done = new Promise<AttachOutcome>((resolve) => {
    finish = resolve;
  });
  const unsubscribe = door.onEvent((event: UxEvent) => {
    if (event.type === 'exec_command_output_delta' && event.call_id === target.callId) {
      if (event.chunk.length > 0) atLineStart = event.chunk[event.chunk.length - 1] === 0x0a;
      terminal.write(event.chunk);
    }
    if (event.type === 'sandbox_notice' && event.process_id === id)
      terminal.write(`\r\n[ux sandbox: ${readableText(event.message)}]\r\n`);
    if (event.type === 'exec_command_end' && event.process_id === id)
      finish({ kind: 'exited', exitCode: event.exit_code });
  });
  if (!door.processes().some((process) => process.sessionId === target.sessionId && process.running)) {
    // It ended between the receipt and now: a poll collects the rest (shown: nothing is lost) and
    // the exit code.
    unsubscribe();
    const last = await door.writeStdin(
      { session_id: target.sessionId, yield_time_ms: 250, max_output_tokens: ALL_KEPT_OUTPUT_TOKENS },
      { callId: `${target.callId}-attach` },
    );
    const rest = last.result?.output ?? '';
    if (rest !== '') {
      terminal.write(rest);
      atLineStart = rest.endsWith('\n');
    }
    const exitCode = last.result?.exit_code ?? 0;
    terminal.write(
      `${atLineStart ? '' : '\r\n'}[ux: session ${id} exited with code ${exitCode}${elapsedSince(target)}]\n`,
    );
    return { kind: 'exited', exitCode };
  }

  if (target.announced !== true) terminal.write(attachStatus(target));
  let pending = forwardable(target.typedAhead ?? '', target.tty);
  let writing: Promise<void> | undefined;
  let writes = 0;
  const flush = () => {
    if (writing || pending === '') return;
    const chars = pending;
    pending = '';
    writing = door
      .writeStdin(
        { session_id: target.sessionId, chars, yield_time_ms: 250 },
        { callId: `${target.callId}-key-${++writes}` },
      )
      .then(() => undefined)
      .finally(() => {
        writing = undefined;
        flush();
      });
  };
  const release = terminal.raw((data) => {
    const detachAt = data.indexOf(DETACH_KEY);
    const keys = (detachAt >= 0 ? data.subarray(0, detachAt) : data).toString('utf8');
    pending += forwardable(keys, target.tty);
    flush();
    if (detachAt >= 0) finish({ kind: 'detached' });
  });
  flush();
  const outcome = await done;
  release();
  unsubscribe();
  await writing;
  const elapsed = elapsedSince(target);
  const newline = atLineStart ? '' : '\r\n';
  terminal.write(
    outcome.kind === 'detached'
      ? `${newline}[detached; session ${id} keeps running]\n`
      : `${newline}[ux: session ${id} exited with code ${outcome.exitCode}${elapsed}]\n`,
  );
  return outcome;
}

function elapsedSince(target: AttachTarget): string {
  return target.startedAt === undefined ? '' : ` after ${formatElapsed(Date.now() - target.startedAt)}`;
}

/** About 4 MB: more than the 1 MiB the door keeps, so a late poll shows all of the rest. */
const ALL_KEPT_OUTPUT_TOKENS = 1_000_000;

/** What of the typed keys goes to the process: all of them with a terminal, else only Ctrl-C. */
function forwardable(keys: string, tty: boolean): string {
  if (tty) return keys;
  return keys.includes('\u0003') ? '\u0003' : '';
}

/** Elapsed time for people: 0.12 s, 3.4 s, 2 min 5 s. */
export function formatElapsed(ms: number): string {
  if (ms < 10_000) return `${(ms / 1000).toFixed(ms < 1000 ? 2 : 1)} s`;
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s`;
}
