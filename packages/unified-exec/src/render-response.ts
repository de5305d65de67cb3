import { EXEC_RESULT_VERSION, type ExecResult, readableText } from '@ux/protocol/core';
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
  /** The sandbox blocked the run and it was not run again (the text reads as an ordinary receipt). */
  sandboxDenied?: boolean;
}

/** The text the model reads (docs/reference/door.md §7), byte for byte. */
export function renderResponseText(parts: ResponseParts): string {
  const lines: string[] = [];
  if (parts.chunkId !== '') lines.push(`Chunk ID: ${parts.chunkId}`);
  lines.push(`Wall time: ${(parts.wallTimeMs / 1000).toFixed(4)} seconds`);
  if (parts.exitCode !== undefined) lines.push(`Process exited with code ${parts.exitCode}`);
  if (parts.sessionId !== undefined) lines.push(`Process running with session ID ${parts.sessionId}`);
  // A notice is one line of ux's (escaped where it was made; again here, which changes nothing then);
  // the output after `Output:` is the command's data, as it wrote it.
  for (const notice of parts.notices ?? []) lines.push(`Sandbox: ${readableText(notice)}`);
  lines.push(`Original token count: ${parts.output.tokenCount}`);
  lines.push('Output:');
  lines.push(parts.output.truncated(parts.maxTokens));
  return lines.join('\n');
}

/**
 * The structured result. `output` is what the text shows: within the call's token budget
 * (`max_output_tokens`, default 10000 tokens, about 40 KB), head and tail with the middle marked.
 * Upstream sends the whole kept output (up to 1 MiB, middle dropped without a mark) unless the call
 * set a budget; a reply of megabytes is no use to a client, and the counts below describe it all.
 */
export function renderStructured(parts: ResponseParts): ExecResult {
  return {
    result_version: EXEC_RESULT_VERSION,
    status: parts.exitCode !== undefined ? 'exited' : 'running',
    ...(parts.chunkId !== '' ? { chunk_id: parts.chunkId } : {}),
    wall_time_seconds: Number((parts.wallTimeMs / 1000).toFixed(4)),
    ...(parts.exitCode !== undefined ? { exit_code: parts.exitCode } : {}),
    ...(parts.sessionId !== undefined ? { session_id: parts.sessionId } : {}),
    original_token_count: parts.output.tokenCount,
    output_bytes: parts.output.byteLength,
    output_lines: parts.output.lineCount,
    ...(parts.notices?.length ? { sandbox_notices: parts.notices.map(readableText) } : {}),
    ...(parts.sandboxDenied ? { sandbox_denied: true } : {}),
    output: parts.output.truncated(parts.maxTokens),
  };
}

/** Output known only as text (a denied attempt's), in the shape responses take. */
export function collectedText(text: string): CollectedOutput {
  const output = new CollectedOutput();
  output.push(Buffer.from(text, 'utf8'));
  return output;
}
