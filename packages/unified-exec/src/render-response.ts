import type { ExecResult } from '@ux/protocol/core';
import { CollectedOutput } from './collected-output.js';

/** Six random lowercase hex characters: a label for one piece of output, not a secret. */
export function newChunkId(): string {
  return Math.floor(Math.random() * 0x1000000)
    .toString(16)
    .padStart(6, '0');
}

export interface ResponseParts {
  chunkId: string;
  wallTimeMs: number;
  exitCode?: number;
  sessionId?: number;
  /** The output this call collected. */
  output: CollectedOutput;
  /** The effective token budget. */
  maxTokens: number;
  /** What the sandbox took back since the last receipt of this process, one message each. */
  notices?: readonly string[];
}

/** The text the model reads (spec §3.9), byte for byte. */
export function renderResponseText(parts: ResponseParts): string {
  const lines: string[] = [];
  if (parts.chunkId !== '') lines.push(`Chunk ID: ${parts.chunkId}`);
  lines.push(`Wall time: ${(parts.wallTimeMs / 1000).toFixed(4)} seconds`);
  if (parts.exitCode !== undefined) lines.push(`Process exited with code ${parts.exitCode}`);
  if (parts.sessionId !== undefined) lines.push(`Process running with session ID ${parts.sessionId}`);
  for (const notice of parts.notices ?? []) lines.push(`Sandbox: ${notice}`);
  lines.push(`Original token count: ${parts.output.tokenCount}`);
  lines.push('Output:');
  lines.push(parts.output.truncated(parts.maxTokens));
  return lines.join('\n');
}

/**
 * The structured result. `output` is complete unless the call gave `max_output_tokens`, as upstream
 * does for structured consumers.
 */
export function renderStructured(parts: ResponseParts, truncate: boolean): ExecResult {
  return {
    ...(parts.chunkId !== '' ? { chunk_id: parts.chunkId } : {}),
    wall_time_seconds: Number((parts.wallTimeMs / 1000).toFixed(4)),
    ...(parts.exitCode !== undefined ? { exit_code: parts.exitCode } : {}),
    ...(parts.sessionId !== undefined ? { session_id: parts.sessionId } : {}),
    original_token_count: parts.output.tokenCount,
    ...(parts.notices?.length ? { sandbox_notices: [...parts.notices] } : {}),
    output: truncate ? parts.output.truncated(parts.maxTokens) : parts.output.text(),
  };
}

/** Output known only as text (a denied attempt's), in the shape responses take. */
export function collectedText(text: string): CollectedOutput {
  const output = new CollectedOutput();
  output.push(Buffer.from(text, 'utf8'));
  return output;
}
