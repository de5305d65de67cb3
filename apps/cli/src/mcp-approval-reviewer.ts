import { NoReviewerError, REVIEWER_SPECIFICATION_VERSION, type Reviewer } from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import { type ApprovalRoute, clientThenInboxReviewer } from './inbox-reviewer.js';
import { pausingReviewer } from './mcp-reviewer.js';

export interface McpApprovalReviewerOptions {
  /** Where a question for a person goes (`approvalRoute`). */
  route: ApprovalRoute;
  /** `client-then-inbox` with a client that can be asked: its automatic refusal goes to the inbox. */
  inboxAfterClient: boolean;
  /** The client's elicitation reviewer; made only when the route uses it. */
  elicitation(): Reviewer;
  inboxReviewer: Reviewer;
  /** Takes back the client's automatic refusal of this call's question (then the inbox answers). */
  automaticRefusal(callId: string): boolean;
  /** The door's pause while a person is asked (its timers stop). */
  setPaused(paused: boolean): void;
  log(text: string): void;
}

/**
 * The person `ux mcp` asks, by route: nobody (every question refused, saying how to get one), the
 * inbox, the client, or the client then the inbox. A person's question pauses the door meanwhile.
 */
export function mcpApprovalReviewer(options: McpApprovalReviewerOptions): Reviewer {
  const { route, log } = options;
  if (route === 'nobody') return noElicitationReviewer(log);
  const person =
    route === 'inbox'
      ? options.inboxReviewer
      : options.inboxAfterClient
        ? clientThenInboxReviewer(
            options.elicitation(),
            options.inboxReviewer,
            options.automaticRefusal,
            (why) => log(`ux mcp: ${why}; approval questions go to the approvals inbox (ux approvals)\n`),
          )
        : options.elicitation();
  return pausingReviewer(person, options.setPaused);
}

function noElicitationReviewer(log: (text: string) => void): Reviewer {
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'mcp-no-elicitation',
    review: async (request) => {
      log(
        `ux mcp: \`${readableText(request.display_command ?? request.command.join(' '))}\` needs approval and the client cannot be asked: refused\n`,
      );
      throw new NoReviewerError(
        'the MCP client does not support elicitation and approvals_via is "client"; approve with a client that does, set approvals_via = "client-then-inbox" to answer with `ux approvals`, or start ux mcp with --approval / --sandbox so that none is needed',
      );
    },
  };
}
