import type { UxEvent } from '@ux/protocol/core';
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
  let finish!: (outcome: AttachOutcome) => void;
  const done = new Promise<AttachOutcome>((resolve) => {
    finish = resolve;
  });
  const unsubscribe = door.onEvent((event: UxEvent) => {
    if (event.type === 'exec_command_output_delta' && event.call_id === target.callId)
      terminal.write(event.chunk);
    if (event.type === 'sandbox_notice' && event.process_id === id)
      terminal.write(`\r\n[ux sandbox: ${event.message}]\r\n`);
    if (event.type === 'exec_command_end' && event.process_id === id)
      finish({ kind: 'exited', exitCode: event.exit_code });
  });
  if (!door.processes().some((process) => process.sessionId === target.sessionId && process.running)) {
    // It ended between the receipt and now: a poll collects the rest and the exit code.
    unsubscribe();
    const last = await door.writeStdin(
      { session_id: target.sessionId, yield_time_ms: 250 },
      { callId: `${target.callId}-attach` },
    );
    return { kind: 'exited', exitCode: last.result?.exit_code ?? 0 };
  }

  terminal.write(
    `[attached to session ${id}; ${target.tty ? 'keys go to the process' : 'Ctrl-C interrupts it'}; Ctrl-] detaches]\n`,
  );
  let pending = '';
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
    const forwarded = target.tty ? keys : keys.includes('\u0003') ? '\u0003' : '';
    pending += forwarded;
    flush();
    if (detachAt >= 0) finish({ kind: 'detached' });
  });
  const outcome = await done;
  release();
  unsubscribe();
  await writing;
  terminal.write(
    outcome.kind === 'detached'
      ? `\n[detached; session ${id} keeps running]\n`
      : `\n[session ${id} exited with code ${outcome.exitCode}]\n`,
  );
  return outcome;
}
