import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { ExecResult } from '@ux/protocol/core';
import { REFUSAL_NEXT_STEPS, renderResultText } from '@ux/unified-exec';
import { CLIENT_AUTOMATIC_ANSWER_MS, type ClientAnswer } from './mcp-reviewer.js';

/**
 * The MCP answer of a result: its text, and the result itself as `structuredContent`. Every answer
 * carries both, errors and refusals included: Codex and Claude Code show the model the structured
 * result, Gemini shows the text.
 */
export function mcpToolResult(
  success: boolean,
  result: ExecResult,
  text = renderResultText(result),
): CallToolResult {
  return {
    content: [{ type: 'text', text }],
    structuredContent: result,
    ...(success ? {} : { isError: true }),
  };
}

/**
 * A refusal because nobody answered the inbox's question within `approval_timeout_s`: the next step
 * says that a person may be away (not that nobody can ever be asked).
 */
export function nobodyAnswered(result: ExecResult, seconds: number | undefined): ExecResult {
  if (seconds === undefined || result.status !== 'refused' || result.refusal?.decided_by !== 'nobody')
    return result;
  return {
    ...result,
    next_step: `Nobody answered the approval question within ${seconds} s (approval_timeout_s): the person may be away. Do not ask again at once; continue with what runs without approval, or tell the person that this command waits for their answer (they answer with \`ux approvals\`).`,
  };
}

/**
 * A refusal the orchestrator put down to a person, when the client's `decline` or `cancel` came too
 * fast for anyone to have read the question: the client's automatic answer (`codex exec` declines
 * every elicitation, `claude -p` cancels), said so.
 */
export function byWhom(result: ExecResult, answer: ClientAnswer | undefined): ExecResult {
  if (
    result.status !== 'refused' ||
    result.refusal?.decided_by !== 'person' ||
    answer === undefined ||
    answer.ms >= CLIENT_AUTOMATIC_ANSWER_MS
  )
    return result;
  return {
    ...result,
    refusal: {
      decided_by: 'client',
      reason: `the MCP client answered the approval question with "${answer.action}" after ${answer.ms} ms, too soon for a person to have read it: its automatic answer`,
    },
    next_step: REFUSAL_NEXT_STEPS.client,
  };
}
