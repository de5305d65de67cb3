import type { BlockedCommand, ExecCommandSource, UxEvent } from '@ux/protocol/core';
import type { SandboxLevel } from './door-context.js';
import type { ToolResponse } from './tool-response.js';

/** A command that never started, as its events name it. */
export interface BlockedStart {
  callId: string;
  processId: number;
  argv: readonly string[];
  cwd: string;
  source: ExecCommandSource;
  /** When the call started (`Date.now()`): the end event's duration counts from here. */
  startedAt: number;
}

/**
 * The `exec_command_begin` and `exec_command_end` of a command blocked before it started (refused by
 * a person, a reviewer, a rule or the policy; no sandbox can run it; it could not be planned or
 * spawned): every command a listener hears of begins and ends, and both say why this one did not run.
 */
export function emitBlockedCommand(
  emit: (event: UxEvent) => void,
  start: BlockedStart,
  response: ToolResponse,
): void {
  const blocked = blockedBy(response);
  emit({
    type: 'exec_command_begin',
    call_id: start.callId,
    process_id: String(start.processId),
    command: [...start.argv],
    cwd: start.cwd,
    source: start.source,
    sandbox: 'none',
    blocked,
  });
  emit({
    type: 'exec_command_end',
    call_id: start.callId,
    process_id: String(start.processId),
    command: [...start.argv],
    cwd: start.cwd,
    source: start.source,
    exit_code: -1,
    stdout: '',
    stderr: '',
    aggregated_output: '',
    formatted_output: blocked.reason,
    duration_ms: Date.now() - start.startedAt,
    status: blocked.status === 'refused' ? 'declined' : 'failed',
    blocked,
  });
}

/** Why the result says nothing ran: the refusal's reason, or the failure's message. */
function blockedBy(response: ToolResponse): BlockedCommand {
  const { result } = response;
  if (result.status === 'refused' && result.refusal)
    return { status: 'refused', reason: result.refusal.reason };
  return { status: 'failed', reason: result.error?.message ?? response.text.split('\n')[0] ?? 'not started' };
}

/**
 * The `exec_command_begin` and `exec_command_end` of a command the sandbox denied inside the
 * early-exit window and that was not run again: it started, so its events carry its sandbox, exit
 * code and output (its output deltas were never streamed: the receipt has them).
 */
export function emitDeniedCommand(
  emit: (event: UxEvent) => void,
  start: BlockedStart & { sandbox: string; level?: SandboxLevel },
  denial: { exitCode: number; output: string },
): void {
  emit({
    type: 'exec_command_begin',
    call_id: start.callId,
    process_id: String(start.processId),
    command: [...start.argv],
    cwd: start.cwd,
    source: start.source,
    sandbox: start.sandbox,
    ...(start.level ? { sandbox_level: start.level } : {}),
  });
  emit({
    type: 'exec_command_end',
    call_id: start.callId,
    process_id: String(start.processId),
    command: [...start.argv],
    cwd: start.cwd,
    source: start.source,
    exit_code: denial.exitCode,
    stdout: denial.output,
    stderr: '',
    aggregated_output: denial.output,
    formatted_output: denial.output,
    duration_ms: Date.now() - start.startedAt,
    status: denial.exitCode === 0 ? 'completed' : 'failed',
  });
}
