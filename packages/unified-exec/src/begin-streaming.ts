import type { ExecCommandSource } from '@ux/protocol/core';
import type { DoorContext, Launched } from './door-context.js';
import { OutputStream } from './output-stream.js';

/**
 * Announces a started command (`exec_command_begin`), streams its output from now on as delta events,
 * and reports what its sandbox takes back (`sandbox_notice`): the start `exec_command` and
 * `shell_command` share.
 */
export function beginStreaming(
  door: DoorContext,
  start: {
    callId: string;
    processId: number;
    argv: string[];
    cwd: string;
    source: ExecCommandSource;
    launched: Launched;
  },
): OutputStream {
  const { callId, launched } = start;
  door.emit({
    type: 'exec_command_begin',
    call_id: callId,
    process_id: String(start.processId),
    command: start.argv,
    cwd: start.cwd,
    source: start.source,
    sandbox: launched.sandboxType,
    ...(launched.level ? { sandbox_level: launched.level } : {}),
  });
  launched.notices.onNotice((notice) =>
    door.emit({
      type: 'sandbox_notice',
      call_id: callId,
      process_id: String(start.processId),
      kind: notice.kind,
      path: notice.path,
      ...(notice.movedTo === undefined ? {} : { moved_to: notice.movedTo }),
      ...(notice.error === undefined ? {} : { error: notice.error }),
      message: notice.message,
    }),
  );
  return new OutputStream(
    launched.process,
    (chunk) => door.emit({ type: 'exec_command_output_delta', call_id: callId, stream: 'stdout', chunk }),
    // What it printed in the early-exit window, still waiting for the first call to collect it: for
    // the session's last lines only.
    launched.tracker.buffer.snapshot(),
  );
}
