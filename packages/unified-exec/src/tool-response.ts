import type { ExecResult, UxError } from '@ux/protocol/core';
import { renderNotRun, renderResultText } from './render-response.js';

/** What a tool call returns to the host, which hands `text` (or `result`) to the model. */
export interface ToolResponse {
  /** The text the model reads: rendered from `result` (`renderResultText`). */
  text: string;
  /** False for a call that ran nothing or whose wait was stopped (a function-call output with success=false). */
  success: boolean;
  /** The structured result: every call has one, refusals and failures included. */
  result: ExecResult;
  /** The wait was cut short by an interrupt; any process keeps running. */
  aborted?: boolean;
  /** The user answered `abort`: the host should interrupt the whole turn. */
  interruptTurn?: boolean;
  /** The error behind a failed call, with its structured fields. */
  error?: UxError;
}

export interface CallContext {
  /** The tool call's id; events carry it. */
  callId: string;
  turnId?: string;
  /** Aborting stops waiting (an interrupt); it never kills a stored process. */
  signal?: AbortSignal;
  /**
   * When the call started (`Date.now()`), if the host received it earlier than the door (an MCP
   * request); default the handler's entry. Every result's wall time counts from here.
   */
  startedAt?: number;
}

/** A response whose text is rendered from its result. */
export function respond(
  result: ExecResult,
  extra: Omit<Partial<ToolResponse>, 'text' | 'result'> = {},
): ToolResponse {
  const success = extra.success ?? (result.status === 'exited' || result.status === 'running');
  return { ...extra, text: renderResultText(result), success, result };
}

/** A call that could not be carried out (bad arguments, unknown session, a start that failed). */
export function failed(
  startedAt: number,
  fields: { code: string; message: string; command?: string; nextStep?: string; error?: UxError },
  extra: Omit<Partial<ToolResponse>, 'text' | 'result' | 'error'> = {},
): ToolResponse {
  return respond(
    renderNotRun({
      status: 'failed',
      wallTimeMs: Date.now() - startedAt,
      ...(fields.command === undefined ? {} : { command: fields.command }),
      error: { code: fields.code, message: fields.message },
      ...(fields.nextStep === undefined ? {} : { nextStep: fields.nextStep }),
    }),
    { ...extra, ...(fields.error ? { error: fields.error } : {}) },
  );
}

/** The wait was stopped: the process (when there is one) keeps running; or the session shut down. */
export function interrupted(
  startedAt: number,
  fields: { sessionId?: number; shutDown?: boolean; command?: string; endedAtQuestion?: boolean },
): ToolResponse {
  const wallTimeMs = Date.now() - startedAt;
  if (fields.shutDown)
    return failed(
      startedAt,
      {
        code: 'session_shut_down',
        message: `stopped after ${(wallTimeMs / 1000).toFixed(1)}s: the session shut down and ended its processes`,
        ...(fields.command === undefined ? {} : { command: fields.command }),
      },
      { aborted: true },
    );
  return respond(
    renderNotRun({
      status: 'interrupted',
      wallTimeMs,
      ...(fields.command === undefined ? {} : { command: fields.command }),
      ...(fields.sessionId === undefined || fields.endedAtQuestion ? {} : { sessionId: fields.sessionId }),
      ...(fields.endedAtQuestion
        ? {
            nextStep:
              'The person aborted at the question about a program this command started: that program was refused and the command was ended.',
          }
        : fields.sessionId === undefined
          ? {}
          : {
              nextStep: `The wait was interrupted; the process keeps running: call write_stdin with session_id ${fields.sessionId} to read its output, or chars "\\u0003" (Ctrl-C) to stop it.`,
            }),
    }),
    { success: false, aborted: true },
  );
}
