import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { EffectivePolicy } from '@ux/protocol/core';
import { renderNotRun, type UnifiedExec } from '@ux/unified-exec';
import type { McpPolicyTextWatch } from './mcp-policy-text-watch.js';
import { mcpListedTool, mcpToolAnnotations } from './mcp-policy-words.js';
import type { ClientAnswer } from './mcp-reviewer.js';
import { byWhom, mcpToolResult, nobodyAnswered } from './mcp-tool-result.js';

const PROGRESS_INTERVAL_MS = 1000;

export interface McpToolsOptions {
  /** The tool plan's tools (exec_command and write_stdin, or shell_command). */
  servedTools: readonly string[];
  policy: EffectivePolicy;
  /** A remote execution environment is configured (the tools' annotations then promise less). */
  remoteEnvironments: boolean;
  ensureDoor(): Promise<UnifiedExec>;
  policyText: McpPolicyTextWatch;
  /** The server is shutting down: nothing new starts. */
  draining(): boolean;
  /** The client's refusals of this session's questions, by call id (`byWhom`). */
  clientRefusals: Map<string, ClientAnswer>;
  /** Calls whose inbox question nobody answered in time, with the timeout in seconds (`nobodyAnswered`). */
  timedOut: Map<string, number>;
}

/**
 * tools/list and tools/call of `ux mcp`. The list carries the policy text in exec_command's
 * description (remembered, so a change is notified); a call runs on the door, reports progress each
 * second when the client asks for it, and answers with the structured result and its text.
 */
export function serveMcpTools(server: Server, options: McpToolsOptions): void {
  const { servedTools } = options;
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const served = (await options.ensureDoor()).tools.filter((tool) => servedTools.includes(tool.name));
    const policyText = options.policyText.text(Boolean(server.getClientCapabilities()?.elicitation));
    options.policyText.listed(policyText);
    return {
      tools: served.map((tool) =>
        mcpListedTool(
          tool,
          policyText,
          mcpToolAnnotations(tool.name, options.policy, options.remoteEnvironments),
        ),
      ),
    };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    // The call's wall time counts from here: before the door exists, approvals and sandbox set-up.
    const startedAt = Date.now();
    const { name, arguments: toolArgs } = request.params;
    if (!servedTools.includes(name))
      return mcpToolResult(
        false,
        renderNotRun({
          status: 'failed',
          wallTimeMs: Date.now() - startedAt,
          error: {
            code: 'unknown_tool',
            message: `unknown tool "${name}"; this server has ${servedTools.join(' and ')}`,
          },
          nextStep: `Call ${servedTools.join(' or ')}.`,
        }),
      );
    if (options.draining()) return notRun(startedAt);
    const door = await options.ensureDoor();
    if (options.draining()) return notRun(startedAt);
    const progressToken = request.params._meta?.progressToken;
    const ticker =
      progressToken === undefined
        ? undefined
        : setInterval(() => {
            const seconds = Math.round((Date.now() - startedAt) / 1000);
            void extra
              .sendNotification({
                method: 'notifications/progress',
                params: {
                  progressToken,
                  progress: seconds,
                  message: `${name} waiting for output (${seconds}s)`,
                },
              })
              .catch(() => undefined);
          }, PROGRESS_INTERVAL_MS);
    const callId = `mcp-${String(extra.requestId)}`;
    try {
      const response = await door.call(name, toolArgs ?? {}, { callId, signal: extra.signal, startedAt });
      const result = nobodyAnswered(
        byWhom(response.result, options.clientRefusals.get(callId)),
        options.timedOut.get(callId),
      );
      return mcpToolResult(response.success, result, result === response.result ? response.text : undefined);
    } finally {
      options.timedOut.delete(callId);
      options.clientRefusals.delete(callId);
      if (ticker) clearInterval(ticker);
    }
  });
}

/** A call that came after the input ended: refused, nothing started. */
function notRun(startedAt: number): CallToolResult {
  return mcpToolResult(
    false,
    renderNotRun({
      status: 'failed',
      wallTimeMs: Date.now() - startedAt,
      error: {
        code: 'server_shutting_down',
        message: 'not run: the server is shutting down (its input ended); nothing was started',
      },
    }),
  );
}
