import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  GetPromptRequestSchema,
  type GetPromptResult,
  ListPromptsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { UnifiedExec } from '@ux/unified-exec';

export const CLEAN_PROMPT = 'clean_background_terminals';
const DESCRIPTION =
  'End every command ux is still running in this session (the background sessions write_stdin polls); nothing else changes. ux keeps at most 64; use this when they pile up.';

/**
 * The user's way to stop every background process of `ux mcp`: an MCP prompt (clients offer prompts
 * to the person, often as a slash command), whose use ends them all (CleanBackgroundTerminals) and
 * tells the conversation which session ids are gone. The model's tools stay exec_command and
 * write_stdin only.
 */
export function serveCleanPrompt(server: Server, door: () => Promise<UnifiedExec>): void {
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({
    prompts: [{ name: CLEAN_PROMPT, description: DESCRIPTION }],
  }));
  server.setRequestHandler(GetPromptRequestSchema, async (request): Promise<GetPromptResult> => {
    const { name, arguments: args } = request.params;
    if (name !== CLEAN_PROMPT)
      throw new McpError(
        ErrorCode.InvalidParams,
        `unknown prompt ${JSON.stringify(name)}; the only one is ${CLEAN_PROMPT}`,
      );
    const extra = Object.keys(args ?? {});
    if (extra.length > 0)
      throw new McpError(
        ErrorCode.InvalidParams,
        `${CLEAN_PROMPT} takes no arguments, got ${extra.map((key) => JSON.stringify(key)).join(', ')}`,
      );
    const exec = await door();
    const ended = exec
      .processes()
      .filter((process) => process.running)
      .map((process) => process.sessionId);
    await exec.cleanBackgroundTerminals();
    const text =
      ended.length === 0
        ? 'ux: no background session was running.'
        : `ux ended every background session (session ${ended.join(', ')}) at the user's request; those session ids are no longer valid.`;
    return { description: DESCRIPTION, messages: [{ role: 'user', content: { type: 'text', text } }] };
  });
}
