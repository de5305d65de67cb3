import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { shlexJoin } from '@ux/orchestrator';
import {
  type ApprovalRequest,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type Reviewer,
} from '@ux/protocol/core';
import { approvalChoices } from './approval-choices.js';

/**
 * Asks the MCP client's user through an elicitation request. Declining denies; cancelling or a client
 * that cannot answer aborts; anything else the client sends is a denial. Never approves on its own.
 */
export function createElicitationReviewer(server: Server, log: (text: string) => void): Reviewer {
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'mcp-elicitation',
    async review(request: ApprovalRequest, { signal }): Promise<ReviewDecision> {
      const choices = approvalChoices(request);
      try {
        const result = await server.elicitInput(
          {
            message: [
              request.retry
                ? 'The sandbox stopped this command. Run it again without the sandbox?'
                : 'Run this command?',
              `command: ${shlexJoin(request.command)}`,
              `cwd: ${request.cwd}`,
              ...(request.reason ? [`reason: ${request.reason}`] : []),
            ].join('\n'),
            requestedSchema: {
              type: 'object',
              properties: {
                decision: {
                  type: 'string',
                  title: 'Decision',
                  oneOf: choices.map((choice) => ({ const: choice.value, title: choice.title })),
                },
              },
              required: ['decision'],
            },
          },
          { signal, timeout: 24 * 60 * 60 * 1000 },
        );
        if (result.action === 'decline') return { type: 'denied' };
        if (result.action === 'cancel') return { type: 'abort' };
        const chosen = choices.find((choice) => choice.value === result.content?.decision);
        return chosen ? chosen.decision : { type: 'denied' };
      } catch (error) {
        if (signal.aborted) return { type: 'abort' };
        log(
          `ux mcp: the approval request failed (${error instanceof Error ? error.message : String(error)}); denied\n`,
        );
        return { type: 'denied' };
      }
    },
  };
}
