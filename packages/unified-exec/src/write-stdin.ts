import { StdinClosedError, UnknownProcessIdError, UxError } from '@ux/protocol/core';
import { collectOutput } from './collect-output.js';
import type { DoorContext, Entry } from './door-context.js';
import { maxOutputTokens, sessionReceipt } from './receipt.js';
import { writeStdinArguments } from './tool-arguments.js';
import { type CallContext, failed, interrupted, type ToolResponse } from './tool-response.js';
import { writeStdinYieldMs } from './yield-time.js';

/** The Ctrl-C sentinel: on a session without a terminal it becomes SIGINT to the process group. */
export const CTRL_C = '\u0003';
/** After writing to a terminal, time for the program to react before output is collected. */
export const POST_WRITE_SETTLE_MS = 100;
/** Most bytes one `write_stdin` may carry. */
export const MAX_WRITE_STDIN_BYTES = 1024 * 1024;

/** `write_stdin` (docs/reference/door.md §10). Never throws. */
export async function writeStdin(
  door: DoorContext,
  raw: unknown,
  context: CallContext,
): Promise<ToolResponse> {
  // The wall time counts from the call's start: the write and its settling time included.
  const callStart = context.startedAt ?? Date.now();
  const parsed = await writeStdinArguments(raw);
  if (!parsed.success)
    return failed(callStart, {
      code: parsed.error.code,
      message: `write_stdin failed: ${parsed.error.message}`,
      nextStep: 'Nothing was written: correct the arguments the message names and call write_stdin again.',
      error: parsed.error,
    });
  const args = parsed.data;
  const id = args.session_id;
  const entry = door.store.get(id);
  if (!entry) return unknownSession(callStart, id);
  entry.lastUsed = Date.now();
  const { process, tracker } = entry.launched;
  const chars = args.chars ?? '';
  const size = Buffer.byteLength(chars, 'utf8');
  if (size > MAX_WRITE_STDIN_BYTES) {
    return failed(callStart, {
      code: 'invalid_arguments',
      message: `write_stdin failed: chars holds ${size} bytes; at most ${MAX_WRITE_STDIN_BYTES} are accepted per call`,
      nextStep: `Nothing was written: send the text in pieces of at most ${MAX_WRITE_STDIN_BYTES} bytes.`,
    });
  }

  if (chars !== '') {
    try {
      await deliverChars(entry, chars);
      if (entry.tty) await new Promise((resolve) => setTimeout(resolve, POST_WRITE_SETTLE_MS));
    } catch (error) {
      if (StdinClosedError.isInstance(error) && error.reason === 'no_stdin') {
        return failed(callStart, {
          code: error.code,
          message: `write_stdin failed: ${error.message}`,
          nextStep: `Nothing was written. Poll with empty chars, or stop it with chars "\\u0003"; to type into a program, start it with exec_command and tty true.`,
          error,
        });
      }
      const detail = StdinClosedError.isInstance(error)
        ? 'failed to write to stdin'
        : (error as Error).message;
      return failed(callStart, {
        code: UxError.isInstance(error) ? error.code : 'write_failed',
        message: `write_stdin failed: ${detail}`,
        nextStep: `Poll session ${id} with empty chars to see its state.`,
        ...(UxError.isInstance(error) ? { error } : {}),
      });
    }
  }

  const call = door.callSignal(context.signal);
  const startedAt = Date.now();
  const since = callStart;
  // While this call waits on it, pruning leaves the process alone.
  entry.activeCalls = (entry.activeCalls ?? 0) + 1;
  try {
    const yieldMs = writeStdinYieldMs(args.yield_time_ms, chars === '', door.maxBackgroundTerminalTimeoutMs);
    const collected = await collectOutput(process, tracker, startedAt + yieldMs, door.pause, call.signal);
    if (collected.aborted)
      return interrupted(callStart, {
        shutDown: door.isShutDown(),
        ...(door.store.get(id) ? { sessionId: id } : {}),
      });
    const output = collected.output;
    if (!door.store.get(id)) return unknownSession(callStart, id);
    const status = process.exitStatus();
    if (status && tracker.outputClosed) await entry.launched.settled();
    if (chars !== '' || !status) {
      door.emit({
        type: 'terminal_interaction',
        call_id: entry.callId,
        process_id: String(id),
        stdin: chars,
      });
    }
    return sessionReceipt(door, entry, status, {
      wallTimeMs: Date.now() - callStart,
      output,
      maxTokens: maxOutputTokens(door, args.max_output_tokens),
      notices: entry.launched.notices.takeUnreported(),
      since,
      ...(collected.waitingForInput ? { waitingForInput: true } : {}),
    });
  } finally {
    entry.activeCalls -= 1;
    call.done();
  }
}

/**
 * Delivers chars to a session as `write_stdin` does, without collecting its output (which stays for
 * the next poll): all of them to a terminal; to a pipe session only Ctrl-C, as SIGINT to its process
 * group, anything else is a `StdinClosedError` (`no_stdin`). A write to a process that has exited
 * is not an error (its output is still to collect).
 */
export async function deliverChars(entry: Entry, chars: string): Promise<void> {
  const { process } = entry.launched;
  if (!entry.tty) {
    if (chars !== CTRL_C) throw new StdinClosedError({ processId: entry.id, reason: 'no_stdin' });
    await process.interrupt();
    return;
  }
  try {
    await process.write(chars);
  } catch (error) {
    if (process.exitStatus() === undefined) throw error;
  }
}

/** A session id the store does not hold: never started, already exited and reported, or pruned. */
function unknownSession(callStart: number, id: number): ToolResponse {
  const error = new UnknownProcessIdError(id);
  return failed(callStart, {
    code: 'unknown_session',
    message: `write_stdin failed: ${error.message}`,
    nextStep:
      'No process has this session id: it exited and its exit was already reported, or it never existed. Start the command again with exec_command if you need it.',
    error,
  });
}
