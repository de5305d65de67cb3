import { asksAboutHosts } from '@ux/orchestrator';
import { approvalPolicyName, type EffectivePolicy, type ToolDefinition } from '@ux/protocol/core';
import {
  describePolicyForModel,
  type PolicyAsker,
  type PolicyForModel,
  withPolicyText,
} from '@ux/protocol-utils';
import type { CliSession } from './cli-session.js';

/** What changed during the session that a model must know: answers "for the session", saved prefixes. */
export interface SessionPolicyChanges {
  /** Hosts answered "for the session" (by the person or a reviewer), in the order they were answered. */
  hosts: Map<string, 'allowed' | 'refused'>;
  /** Prefixes approved with `prefix_rule`, in the order they were approved. */
  prefixes: string[][];
  /**
   * The client answered an approval question itself, too fast for a person (`codex exec` declines,
   * `claude -p` cancels): from then on the model is told that nobody can be asked.
   */
  clientAnswersItself?: { action: 'decline' | 'cancel'; ms: number };
}

export function noSessionPolicyChanges(): SessionPolicyChanges {
  return { hosts: new Map(), prefixes: [] };
}

/**
 * Records a change; returns whether it is new (a host answered again the same way, or a prefix
 * approved twice, changes nothing a model reads).
 */
export function recordSessionPolicyChange(
  changes: SessionPolicyChanges,
  change:
    | { kind: 'host'; host: string; decision: 'allowed' | 'refused' }
    | { kind: 'prefix'; prefix: readonly string[] }
    | { kind: 'client_answers_itself'; action: 'decline' | 'cancel'; ms: number },
): boolean {
  if (change.kind === 'client_answers_itself') {
    if (changes.clientAnswersItself) return false;
    changes.clientAnswersItself = { action: change.action, ms: change.ms };
    return true;
  }
  if (change.kind === 'host') {
    if (changes.hosts.get(change.host) === change.decision) return false;
    changes.hosts.delete(change.host);
    changes.hosts.set(change.host, change.decision);
    return true;
  }
  const key = JSON.stringify(change.prefix);
  if (changes.prefixes.some((prefix) => JSON.stringify(prefix) === key)) return false;
  changes.prefixes.push([...change.prefix]);
  return true;
}

export interface McpPolicyContext {
  session: CliSession;
  /** The session's effective policy (`sessionPolicy`). */
  policy: EffectivePolicy;
  /** The session directory. */
  cwd: string;
  /** The client declared elicitation in its `initialize`: a person can be asked through it. */
  canElicit: boolean;
  platform: NodeJS.Platform;
  changes: SessionPolicyChanges;
}

/** Why nobody can be asked when the client has no elicitation: said to the model as it is. */
export const NO_ELICITATION_WHY = 'this MCP client has no elicitation, so it cannot show approval questions';

/**
 * Who answers approvals in `ux mcp`: nobody under `never`; the `[auto_review]` command when it is strict,
 * or when `approvals_reviewer` routes there under on-request and granular (as `createCliDoor` wires the
 * chain); else the person, when the client can show questions.
 */
export function mcpAsker(session: CliSession, canElicit: boolean): PolicyAsker {
  const approvalPolicy = session.settings.approvalPolicy.value;
  const name = approvalPolicyName(approvalPolicy);
  if (name === 'never') return { kind: 'nobody', why: 'approval policy never' };
  const { review } = session;
  const routed =
    review.strict.value ||
    (review.approvalsReviewer.value === 'auto_review' && (name === 'on-request' || name === 'granular'));
  if (routed && review.autoReview) return { kind: 'automatic_reviewer' };
  return canElicit ? { kind: 'person' } : { kind: 'nobody', why: NO_ELICITATION_WHY };
}

/**
 * Whether anyone can answer an approval question in this session (`ux exec` too: the person when a
 * terminal or an eliciting client reaches them, or the automatic reviewer): a named denial offers
 * `require_escalated` only then.
 */
export function someoneCanAnswer(session: CliSession, personReachable: boolean): boolean {
  return mcpAsker(session, personReachable).kind !== 'nobody';
}

/** The facts `describePolicyForModel` needs, from the session and what changed in it. */
export function mcpPolicyForModel(context: McpPolicyContext): PolicyForModel {
  const { session, policy, changes } = context;
  const { settings, toolPlan } = session;
  const approvalPolicy = settings.approvalPolicy.value;
  const answered = changes.clientAnswersItself;
  const asker: PolicyAsker =
    answered && context.canElicit
      ? {
          kind: 'nobody',
          why: `this MCP client answers approval questions itself: it said "${answered.action}" to one after ${answered.ms} ms, before anyone could read it`,
        }
      : mcpAsker(session, context.canElicit);
  const network = settings.network;
  const hostsAnswered = (decision: 'allowed' | 'refused') =>
    [...changes.hosts].filter(([, answer]) => answer === decision).map(([host]) => host);
  const domains: PolicyForModel['domains'] =
    policy.network === 'proxied'
      ? {
          allow: network.allow.map((entry) => entry.pattern),
          deny: network.deny.map((entry) => entry.pattern),
          others: !asksAboutHosts(approvalPolicy)
            ? { refused: `approval policy ${approvalPolicyName(approvalPolicy)} asks nobody` }
            : !network.askUnknown.value
              ? { refused: `not asked about: ${network.askUnknown.source}` }
              : network.cap?.mode === 'domains'
                ? { ask: 'within', within: network.cap.allow }
                : 'ask',
          allowedThisSession: hostsAnswered('allowed'),
          refusedThisSession: hostsAnswered('refused'),
        }
      : undefined;
  return {
    policy,
    workspace: context.cwd,
    tool: toolPlan.tools.includes('exec_command') ? 'exec_command' : 'shell_command',
    additionalPermissions: toolPlan.execCommandVariant.additionalPermissions,
    approvalPolicy,
    asker,
    ...(domains ? { domains } : {}),
    ...(changes.prefixes.length > 0 ? { approvedPrefixes: changes.prefixes } : {}),
    environments: {
      defaultId: settings.defaultEnvironment,
      list: settings.environments.map((environment) =>
        environment.kind === 'local'
          ? { id: environment.id }
          : {
              id: environment.id,
              remote: 'a ux exec-server',
              ...(environment.cwd ? { cwd: environment.cwd } : {}),
            },
      ),
    },
    platform: context.platform,
  };
}

/** The policy text, as the model reads it in the tool description and the server's instructions. */
export function mcpPolicyText(context: McpPolicyContext): string {
  return describePolicyForModel(mcpPolicyForModel(context));
}

/** The server's `instructions`: what the tools are for, then the policy. */
export function mcpInstructions(tools: readonly string[], policyText: string): string {
  const use = tools.includes('exec_command')
    ? 'Run shell commands with exec_command; continue or poll running ones with write_stdin.'
    : 'Run shell commands with shell_command.';
  return `${use}\n\n${policyText}`;
}

/** MCP tool annotations (hints a client may show or act on; none of them is a promise). */
export interface McpToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/**
 * Honest hints: every tool runs or types into a program that can change and delete files, and doing it
 * twice is not doing it once. The world beyond the machine is in reach when the policy gives commands a
 * network (on, or by domain) or no ux sandbox at all (danger-full-access, an external sandbox whose
 * limits ux does not know), or when a remote environment runs them.
 */
export function mcpToolAnnotations(
  name: string,
  policy: EffectivePolicy,
  remoteEnvironments: boolean,
): McpToolAnnotations | undefined {
  const openWorldHint =
    policy.fileSystem.kind !== 'restricted' || policy.network !== 'restricted' || remoteEnvironments;
  const base = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint };
  switch (name) {
    case 'exec_command':
      return { title: 'Run a shell command', ...base };
    case 'write_stdin':
      return { title: 'Type into or poll a running command', ...base };
    case 'shell_command':
      return { title: 'Run a shell command to completion', ...base };
    default:
      return undefined;
  }
}

/** A door's tool as `ux mcp` lists it: the policy added to the description of the tool that runs commands. */
export function mcpListedTool(
  tool: ToolDefinition,
  policyText: string,
  annotations: McpToolAnnotations | undefined,
) {
  return {
    name: tool.name,
    ...(annotations ? { title: annotations.title } : {}),
    description: withPolicyText(tool, policyText).description,
    inputSchema: tool.parameters as { type: 'object' },
    ...(tool.outputSchema ? { outputSchema: tool.outputSchema as { type: 'object' } } : {}),
    ...(annotations ? { annotations } : {}),
  };
}
