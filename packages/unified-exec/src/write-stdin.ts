import { StdinClosedError, UxError } from '@ux/protocol/core';
import { collectOutput } from './collect-output.js';
import type { DoorContext } from './door-context.js';
import { maxOutputTokens, sessionReceipt } from './receipt.js';
import { writeStdinArguments } from './tool-arguments.js';
import { abortedText, type CallContext, failure, type ToolResponse } from './tool-response.js';
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
  const parsed = await writeStdinArguments(raw);
  if (!parsed.success) return failure(`write_stdin failed: ${parsed.error.message}`, parsed.error);
  const args = parsed.data;
  const id = args.session_id;
  const entry = door.store.get(id);
  if (!entry) return failure(`write_stdin failed: Unknown process id ${id}`);
  entry.lastUsed = Date.now();
  const { process, tracker } = entry.launched;
  const chars = args.chars ?? '';
  const size = Buffer.byteLength(chars, 'utf8');
  if (size > MAX_WRITE_STDIN_BYTES) {
    return failure(
      `write_stdin failed: chars holds ${size} bytes; at most ${MAX_WRITE_STDIN_BYTES} are accepted per call`,
    );
  }

  if (chars !== '') {
    if (!entry.tty) {
      if (chars !== CTRL_C) {
        const error = new StdinClosedError({ processId: id, reason: 'no_stdin' });
        return failure(`write_stdin failed: ${error.message}`, error);
      }
      await process.interrupt();
    } else {
      try {
        await process.write(chars);
        await new Promise((resolve) => setTimeout(resolve, POST_WRITE_SETTLE_MS));
      } catch (error) {
        // A process that has exited still has output to collect; anything else is a failed write.
        if (process.exitStatus() === undefined) {
          const detail = StdinClosedError.isInstance(error)
            ? 'failed to write to stdin'
            : (error as Error).message;
          return failure(`write_stdin failed: ${detail}`, UxError.isInstance(error) ? error : undefined);
        }
      }
    }
  }

  const call = door.callSignal(context.signal);
  const startedAt = Date.now();
  // While this call waits on it, pruning leaves the process alone.
  entry.activeCalls = (entry.activeCalls ?? 0) + 1;
  try {
    const yieldMs = writeStdinYieldMs(args.yield_time_ms, chars === '', door.maxBackgroundTerminalTimeoutMs);
    const collected = await collectOutput(process, tracker, startedAt + yieldMs, door.pause, call.signal);
    if (collected.aborted)
      return { text: abortedText(startedAt, id, door.isShutDown()), success: false, aborted: true };
    const output = collected.output;
    if (!door.store.get(id)) return failure(`write_stdin failed: Unknown process id ${id}`);
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
    return sessionReceipt(door, id, status, {
      wallTimeMs: Date.now() - startedAt,
      output,
      maxTokens: maxOutputTokens(door, args.max_output_tokens),
      notices: entry.launched.notices.takeUnreported(),
    });
  } finally {
    entry.activeCalls -= 1;
    call.done();
  }
}
