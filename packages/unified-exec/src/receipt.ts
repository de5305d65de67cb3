import { DEFAULT_MAX_OUTPUT_TOKENS, type ExitStatus } from '@ux/protocol/core';
import type { DoorContext } from './door-context.js';
import { newChunkId, type ResponseParts, renderResponseText, renderStructured } from './render-response.js';
import type { ToolResponse } from './tool-response.js';

/** The most output tokens a receipt may show: the call's request, within the turn's budget. */
export function maxOutputTokens(door: DoorContext, requested: number | undefined): number {
  return Math.min(requested ?? DEFAULT_MAX_OUTPUT_TOKENS, door.toolOutputTokenLimit);
}

/**
 * The receipt of a stored session after a wait: with its exit code once it has exited (and the session
 * released), else with its session id.
 */
export function sessionReceipt(
  door: DoorContext,
  id: number,
  status: ExitStatus | undefined,
  parts: Pick<ResponseParts, 'wallTimeMs' | 'output' | 'maxTokens' | 'notices'>,
): ToolResponse {
  if (status) door.store.release(id);
  return receipt({
    chunkId: newChunkId(),
    ...parts,
    ...(status ? { exitCode: status.exitCode } : { sessionId: id }),
  });
}

export function receipt(parts: ResponseParts): ToolResponse {
  return {
    text: renderResponseText(parts),
    success: true,
    result: renderStructured(parts),
  };
}
