import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { ApprovalsVia } from '@ux/config';
import type { EffectivePolicy, Reviewer } from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import type { UnifiedExec } from '@ux/unified-exec';
import type { CliSession } from './cli-session.js';
import { createCliDoor } from './create-cli-door.js';
import { approvalRoute } from './inbox-reviewer.js';
import type { Io } from './io.js';
import { mcpApprovalReviewer } from './mcp-approval-reviewer.js';
import type { McpPolicyTextWatch } from './mcp-policy-text-watch.js';
import {
  recordSessionPolicyChange,
  type SessionPolicyChanges,
  someoneCanAnswer,
} from './mcp-policy-words.js';
import { CLIENT_AUTOMATIC_ANSWER_MS, type ClientAnswer, createElicitationReviewer } from './mcp-reviewer.js';

export interface McpDoorStarterOptions {
  server: Server;
  session: CliSession;
  policy: EffectivePolicy;
  cwd: string;
  io: Io;
  approvalsVia: ApprovalsVia;
  /** The rule file an approved prefix is saved to (named in elicitation questions). */
  ruleFile: string;
  inboxReviewer: Reviewer;
  /**
   * The MCP client's own refusals of approval questions, by call id: a refusal of a person's is told
   * apart from the client's automatic answer (see `CLIENT_AUTOMATIC_ANSWER_MS`).
   */
  clientRefusals: Map<string, ClientAnswer>;
  changes: SessionPolicyChanges;
  policyText: McpPolicyTextWatch;
  log(text: string): void;
}

/** The door of `ux mcp`, built once the client has said what it can do. */
export interface McpDoorStarter {
  /**
   * The door, built on the first call after the client's `initialize` (elicitation decides who
   * approves). A request before that is refused, never held; a door that cannot be built rejects
   * every call with why.
   */
  ensure(): Promise<UnifiedExec>;
  /** The door once built (`ux ps` and `ux attach` reach it). */
  current(): UnifiedExec | undefined;
  /** The door's creation, once started (the shutdown waits for it). */
  creation(): Promise<UnifiedExec> | undefined;
  /** The door could not be built: ux mcp exits 1 when its input ends. */
  failed(): boolean;
}

export function createMcpDoorStarter(options: McpDoorStarterOptions): McpDoorStarter {
  const { server, session, log, approvalsVia: via, changes, clientRefusals } = options;
  let doorCreation: Promise<UnifiedExec> | undefined;
  let door: UnifiedExec | undefined;
  let startFailed = false;

  const ensure = (): Promise<UnifiedExec> => {
    if (doorCreation) return doorCreation;
    const capabilities = server.getClientCapabilities();
    if (!capabilities)
      return Promise.reject(
        new McpError(ErrorCode.InvalidRequest, 'the server is not initialized: send initialize first'),
      );
    const canAsk = Boolean(capabilities.elicitation);
    const route = approvalRoute(via, canAsk);
    // With client-then-inbox, an automatic refusal by the client sends the question to the inbox.
    const inboxAfterClient = route === 'client' && via === 'client-then-inbox';
    // False once the client has shown that it answers approval questions itself (and no inbox follows).
    let personReachable = route !== 'nobody';
    // Set once the door exists; a question can only come from a command the door started.
    let setPaused: (paused: boolean) => void = () => {};
    const reviewer = mcpApprovalReviewer({
      route,
      inboxAfterClient,
      inboxReviewer: options.inboxReviewer,
      log,
      setPaused: (paused) => setPaused(paused),
      elicitation: () =>
        createElicitationReviewer(server, log, { ruleFile: options.ruleFile }, (callId, answer) => {
          clientRefusals.set(callId, answer);
          // The client answers for itself: with no inbox after it, the model is told nobody can be
          // asked, and denials stop offering escalation.
          if (
            !inboxAfterClient &&
            answer.ms < CLIENT_AUTOMATIC_ANSWER_MS &&
            recordSessionPolicyChange(changes, { kind: 'client_answers_itself', ...answer })
          ) {
            personReachable = false;
            options.policyText.changed(canAsk);
          }
        }),
      // The client's automatic refusal of this call's question, taken back: the inbox answers instead.
      automaticRefusal: (callId) => {
        const answer = clientRefusals.get(callId);
        if (answer === undefined || answer.ms >= CLIENT_AUTOMATIC_ANSWER_MS) return false;
        clientRefusals.delete(callId);
        return true;
      },
    });
    if (route === 'nobody')
      log('ux mcp: the client cannot answer elicitation requests; commands that need approval are refused\n');
    else if (route === 'inbox')
      log(
        `ux mcp: approval questions go to the approvals inbox: answer them with \`ux approvals\` (approvals_via = "${via}", ${session.review.approvalsVia.source})\n`,
      );
    doorCreation = createCliDoor(session, {
      policy: options.policy,
      cwd: options.cwd,
      env: options.io.env,
      platform: options.io.platform,
      reviewer,
      reviewerCanAsk: () => someoneCanAnswer(session, personReachable),
      onWarning: (message) => log(`ux mcp: warning: ${readableText(message)}\n`),
      checkSandboxAtStart: true,
      onPolicyChange: (change) => {
        if (recordSessionPolicyChange(changes, change)) options.policyText.changed(canAsk);
      },
    }).catch((error: unknown) => {
      // Told in-band: every request that needs the door is answered with it.
      startFailed = true;
      throw new Error(
        `ux mcp cannot serve: the session could not start: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    // Each exchange through the session's network proxy, as an MCP log message (logger `ux.network`):
    // `info` when it went through, `warning` when it was refused.
    void doorCreation.then(
      (created) => {
        door = created;
        setPaused = (paused) => created.setPaused(paused);
        return created.onEvent((event) => {
          if (event.type !== 'network_access') return;
          const refused = event.decision === 'denied' || event.decision === 'asked_denied';
          void server
            .sendLoggingMessage({ level: refused ? 'warning' : 'info', logger: 'ux.network', data: event })
            .catch(() => undefined);
        });
      },
      () => undefined,
    );
    doorCreation.catch((error: unknown) => {
      log(`${error instanceof Error ? error.message : String(error)}\n`);
    });
    return doorCreation;
  };

  return {
    ensure,
    current: () => door,
    creation: () => doorCreation,
    failed: () => startFailed,
  };
}
