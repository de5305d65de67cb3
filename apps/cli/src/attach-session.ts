import type { UxEvent } from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import type { UnifiedExec } from '@ux/unified-exec';
import type { Terminal } from './terminal.js';

/** Ctrl-]: leaves the process running (as telnet and `docker attach` users expect a key to). */
export const DETACH_KEY = 0x1d;

export type AttachOutcome =
  | { kind: 'exited'; exitCode: number }
  | { kind: 'detached' }
  | { kind: 'lost'; reason: string };

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
  /** How ux's lines name the session (default its id; `ux attach` says PID:SESSION). */
  label?: string;
}

/**
 * A session as attach sees it: the door of this process (`ux exec`), or another ux process's
 * control socket (`ux attach`).
 */
export interface AttachPort {
  /** Output, sandbox notices and the end, from now on; returns the unsubscribe function. */
  watch(listener: {
    output(chunk: Uint8Array): void;
    notice(message: string): void;
    exit(exitCode: number): void;
    /** The session can no longer be reached (its ux process ended). */
    lost(reason: string): void;
  }): () => void;
  /** Whether it still runs; false: it ended before the attach. */
  running(): boolean;
  /** Sends keys through `write_stdin`'s path. */
  send(chars: string): Promise<void>;
  /** For a session that ended before the attach: the output not shown yet, and its exit code. */
  finish(): Promise<{ output: string; exitCode: number }>;
}

/** The one-line status shown when a process is attached. */
export function attachStatus(target: Pick<AttachTarget, 'sessionId' | 'tty' | 'label'>): string {
  return `[ux: running as session ${target.label ?? target.sessionId}; ${target.tty ? 'keys go to the process' : 'Ctrl-C interrupts it'}; Ctrl-] detaches]\n`;
}

/** A session of this process's own door, as `ux exec` attaches it. */
export function doorAttachPort(door: UnifiedExec, target: AttachTarget): AttachPort {
  const id = String(target.sessionId);
  let writes = 0;
  return {
    watch(listener) {
      return door.onEvent((event: UxEvent) => {
        if (event.type === 'exec_command_output_delta' && event.call_id === target.callId)
          listener.output(event.chunk);
        if (event.type === 'sandbox_notice' && event.process_id === id) listener.notice(event.message);
        if (event.type === 'exec_command_end' && event.process_id === id) listener.exit(event.exit_code);
      });
    },
    running: () =>
      door.processes().some((process) => process.sessionId === target.sessionId && process.running),
    async send(chars) {
      await door.writeStdin(
        { session_id: target.sessionId, chars, yield_time_ms: 250 },
        { callId: `${target.callId}-key-${++writes}` },
      );
    },
    async finish() {
      // A poll collects the rest (shown: nothing is lost) and the exit code.
      const last = await door.writeStdin(
        { session_id: target.sessionId, yield_time_ms: 250, max_output_tokens: ALL_KEPT_OUTPUT_TOKENS },
        { callId: `${target.callId}-attach` },
      );
      return { output: last.result?.output ?? '', exitCode: last.result?.exit_code ?? 0 };
    },
  };
}

/**
 * Streams a running process's output to the terminal and sends keystrokes through `write_stdin` until
 * the process ends or the person presses the detach key. Keys typed while a write is in flight are
 * sent together with the next one, in order.
 */
export function attachSession(
  door: UnifiedExec,
  target: AttachTarget,
  terminal: Terminal,
): Promise<AttachOutcome> {
  return attachPort(doorAttachPort(door, target), target, terminal);
}

/** `attachSession` over any session: this process's door or another process's control socket. */
export async function attachPort(
  port: AttachPort,
  target: Omit<AttachTarget, 'callId'>,
  terminal: Terminal,
): Promise<AttachOutcome> {
  const id = target.label ?? String(target.sessionId);
  // Whether the output left the cursor at the start of a line, so ux's closing line starts on its own.
  let atLineStart = target.atLineStart ?? true;
  let finish!: (outcome: AttachOutcome) => void;
  const done = new Promise<AttachOutcome>((resolve) => {
    finish = resolve;
  });
  const unsubscribe = port.watch({
    output(chunk) {
      if (chunk.length > 0) atLineStart = chunk[chunk.length - 1] === 0x0a;
      terminal.write(chunk);
    },
    notice: (message) => terminal.write(`\r\n[ux sandbox: ${readableText(message)}]\r\n`),
    exit: (exitCode) => finish({ kind: 'exited', exitCode }),
    lost: (reason) => finish({ kind: 'lost', reason }),
  });
  if (!port.running()) {
    // It ended between the receipt and now: nothing is lost, the rest is shown with the exit code.
    unsubscribe();
    const { output: rest, exitCode } = await port.finish();
    if (rest !== '') {
      terminal.write(rest);
      atLineStart = rest.endsWith('\n');
    }
    terminal.write(
      `${atLineStart ? '' : '\r\n'}[ux: session ${id} exited with code ${exitCode}${elapsedSince(target)}]\n`,
    );
    return { kind: 'exited', exitCode };
  }

  if (target.announced !== true) terminal.write(attachStatus(target));
  let pending = forwardable(target.typedAhead ?? '', target.tty);
  let writing: Promise<void> | undefined;
  const flush = () => {
    if (writing || pending === '') return;
    const chars = pending;
    pending = '';
    writing = port
      .send(chars)
      .catch(() => undefined)
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
      : outcome.kind === 'lost'
        ? `${newline}[ux: session ${id} can no longer be reached: ${readableText(outcome.reason)}]\n`
        : `${newline}[ux: session ${id} exited with code ${outcome.exitCode}${elapsed}]\n`,
  );
  return outcome;
}

function elapsedSince(target: Pick<AttachTarget, 'startedAt'>): string {
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
