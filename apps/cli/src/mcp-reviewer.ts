import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type ApprovalRequest,
  NoReviewerError,
  REVIEWER_SPECIFICATION_VERSION,
  type ReviewDecision,
  type Reviewer,
} from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import { approvalChoices } from './approval-choices.js';
import { type ApprovalTextOptions, approvalDetails, approvalHeadline, ruleEffect } from './approval-text.js';

/** A `decline` or `cancel` the MCP client sent, and how many milliseconds after the question. */
export interface ClientAnswer {
  action: 'decline' | 'cancel';
  ms: number;
}

/**
 * Below this, a `decline` or `cancel` came from the client itself, not from a person who read the
 * question (`codex exec` declines every elicitation at once, `claude -p` cancels): nobody reads an
 * approval question and answers it within a second.
 */
export const CLIENT_AUTOMATIC_ANSWER_MS = 1000;

/**
 * Asks the MCP client's user through an elicitation request. Declining denies; cancelling aborts; a
 * request the client cannot answer is "no one could be asked"; anything else the client sends is a
 * denial. Never approves on its own.
 */
export function createElicitationReviewer(
  server: Server,
  log: (text: string) => void,
  options: ApprovalTextOptions,
  /** Told of every `decline` and `cancel`, with how long the client took (who decided: see `ClientAnswer`). */
  onRefusal?: (callId: string, answer: ClientAnswer) => void,
): Reviewer {
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'mcp-elicitation',
    async review(request: ApprovalRequest, { signal }): Promise<ReviewDecision> {
      const choices = approvalChoices(request);
      const askedAt = Date.now();
      try {
        const result = await server.elicitInput(
          {
            message: [
              `ux: ${approvalHeadline(request)}`,
              ...approvalDetails(request).map((detail) => `${detail.label}: ${detail.text}`),
              ...choices.flatMap((choice) =>
                choice.decision.type === 'approved_execpolicy_amendment'
                  ? [`"${choice.title}" ${ruleEffect(choice.decision.amendment, request, options)}`]
                  : [],
              ),
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
        if (result.action === 'decline' || result.action === 'cancel')
          onRefusal?.(request.call_id, { action: result.action, ms: Date.now() - askedAt });
        // A per-exec question offers approve or abort only: there, no means stop.
        if (result.action === 'decline')
          return request.available_decisions.includes('denied') ? { type: 'denied' } : { type: 'abort' };
        if (result.action === 'cancel') return { type: 'abort' };
        const chosen = choices.find((choice) => choice.value === result.content?.decision);
        return chosen ? chosen.decision : { type: 'denied' };
      } catch (error) {
        if (signal.aborted) return { type: 'abort' };
        const reason = `the MCP client did not answer the elicitation request: ${readableText(
          error instanceof Error ? error.message : String(error),
        )}`;
        log(`ux mcp: ${reason}; not run\n`);
        throw new NoReviewerError(reason, { cause: error });
      }
    },
  };
}

/**
 * `reviewer` that stops the door's yield clocks while a question is open (`setPaused`): a command
 * waiting on an answer (a host its proxy asks about, a program the zsh fork intercepted) is not
 * reported as still running just because the person took longer than its yield time. Overlapping
 * questions keep the clocks stopped until the last one is answered.
 */
export function pausingReviewer(reviewer: Reviewer, setPaused: (paused: boolean) => void): Reviewer {
  let open = 0;
  return {
    ...reviewer,
    async review(request, options) {
      if (open++ === 0) setPaused(true);
      try {
        return await reviewer.review(request, options);
      } finally {
        if (--open === 0) setPaused(false);
      }
    },
  };
}
