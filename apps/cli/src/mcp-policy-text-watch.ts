import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { ApprovalsVia } from '@ux/config';
import { approvalRoute } from './inbox-reviewer.js';
import { type McpPolicyContext, mcpPolicyText } from './mcp-policy-words.js';

/**
 * The policy text the model reads (server instructions, exec_command's description), and the tool
 * list's notice when it changes: once a tools/list answer carried the text, a change of the text (a
 * host allowed for the session, an approved prefix, a client that answers for itself) sends
 * `notifications/tools/list_changed`, so the client lists the tools again and the model reads the
 * new text.
 */
export interface McpPolicyTextWatch {
  /** The text now, for a client that can (or cannot) answer elicitation requests. */
  text(canElicit: boolean): string;
  /** A tools/list answer carried `text`. */
  listed(text: string): void;
  /** Something the text tells changed: notify the client when its listed text is out of date. */
  changed(canElicit: boolean): void;
}

export function watchMcpPolicyText(
  server: Server,
  context: Omit<McpPolicyContext, 'canElicit'> & { approvalsVia: ApprovalsVia },
): McpPolicyTextWatch {
  const { approvalsVia, ...rest } = context;
  // Whether a person can be asked: through the client's elicitation, or the inbox (`approvals_via`).
  const text = (canElicit: boolean) =>
    mcpPolicyText({ ...rest, canElicit: approvalRoute(approvalsVia, canElicit) !== 'nobody' });
  let listedText: string | undefined;
  return {
    text,
    listed(value) {
      listedText = value;
    },
    changed(canElicit) {
      if (listedText === undefined || listedText === text(canElicit)) return;
      void server.sendToolListChanged().catch(() => undefined);
    },
  };
}
