import type { ExecResult, UxError } from '@ux/protocol/core';

/** What a tool call returns to the host, which hands `text` to the model. */
export interface ToolResponse {
  /** The text the model reads. */
  text: string;
  /** False for a failed call (a function-call output with success=false). */
  success: boolean;
  /** The structured result, when the call produced one. */
  result?: ExecResult;
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
}

export function failure(text: string, error?: UxError, extra: Partial<ToolResponse> = {}): ToolResponse {
  return { text, success: false, ...(error ? { error } : {}), ...extra };
}

/**
 * The message of a call interrupted while it waited (upstream's wording), or stopped because the
 * session shut down (then its process was ended, not left running).
 */
export function abortedText(startedAt: number, sessionId?: number, shutDown = false): string {
  const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
  if (shutDown) return `stopped after ${seconds}s: the session shut down and ended its processes`;
  return `aborted by user after ${seconds}s${sessionId === undefined ? '' : `; the process is still running with session ID ${sessionId}`}`;
}
