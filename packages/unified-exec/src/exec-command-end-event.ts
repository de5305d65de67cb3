import type { ExecCommandEndEvent, ExecCommandSource } from '@ux/protocol/core';
import { endOutput, type OutputStream } from './output-stream.js';

export interface ExecCommandEnd {
  /** The call id of the call that started the command. */
  callId: string;
  processId: number;
  command: readonly string[];
  cwd: string;
  source: ExecCommandSource;
  /** `undefined` when it is not known (killed before it was read, or a failure): reported as `-1`. */
  exitCode: number | undefined;
  /** The command's streamed output (the transcript of its deltas). */
  stream: OutputStream;
  /** What the call collected, reported when nothing was streamed; default empty. */
  collected?: string;
  durationMs: number;
}

/**
 * The one `exec_command_end` event of a command (exactly once per started command, whoever sees it
 * end: `exec_command`, `shell_command`, or the watcher of a stored process). `status` is `completed`
 * for exit code 0, `failed` otherwise.
 */
export function execCommandEndEvent(end: ExecCommandEnd): ExecCommandEndEvent {
  const exitCode = end.exitCode ?? -1;
  return {
    type: 'exec_command_end',
    call_id: end.callId,
    process_id: String(end.processId),
    command: [...end.command],
    cwd: end.cwd,
    source: end.source,
    exit_code: exitCode,
    ...endOutput(end.stream, end.collected ?? ''),
    duration_ms: end.durationMs,
    status: exitCode === 0 ? 'completed' : 'failed',
  };
}
