import { DEFAULT_MAX_OUTPUT_TOKENS, type ExitStatus } from '@ux/protocol/core';
import { denialParts } from './denial-parts.js';
import type { DoorContext, Entry } from './door-context.js';
import { newChunkId, type ResponseParts, renderStructured } from './render-response.js';
import { respond, type ToolResponse } from './tool-response.js';

/** The most output tokens a receipt may show: the call's request, within the turn's budget. */
export function maxOutputTokens(door: DoorContext, requested: number | undefined): number {
  return Math.min(requested ?? DEFAULT_MAX_OUTPUT_TOKENS, door.toolOutputTokenLimit);
}

/**
 * The receipt of a stored session after a wait: with its exit code once it has exited (and the session
 * released), else with its session id; a denial the sandbox caused during the wait is named.
 */
export function sessionReceipt(
  door: DoorContext,
  entry: Entry,
  status: ExitStatus | undefined,
  parts: Pick<ResponseParts, 'wallTimeMs' | 'output' | 'maxTokens' | 'notices' | 'command' | 'sandbox'> & {
    /** When this wait started (`Date.now()`). */
    since: number;
    /** The wait ended early because the process waits for input (`collectOutput`). */
    waitingForInput?: boolean;
  },
): ToolResponse {
  if (status) door.store.release(entry.id);
  const { since, waitingForInput: seen, ...rest } = parts;
  // Asked again now (a cheap look at /proc on Linux), unless the wait just ended on it.
  const waiting = !status && (seen === true || entry.launched.process.waitingForInput?.() === true);
  return receipt({
    chunkId: newChunkId(),
    ...rest,
    tty: entry.tty,
    ...(status ? { exitCode: status.exitCode } : { sessionId: entry.id }),
    ...(waiting ? { waitingForInput: true } : {}),
    ...denialParts(door, {
      output: parts.output.text(),
      ...(status ? { exitCode: status.exitCode } : {}),
      cwd: entry.cwd,
      remote: entry.remote,
      since,
      earlyDenied: false,
      tool: entry.tool,
      sandboxType: entry.launched.sandboxType,
    }),
  });
}

/** A receipt: the structured result of the parts, and its text. */
export function receipt(parts: ResponseParts): ToolResponse {
  return respond(renderStructured(parts), { success: true });
}
