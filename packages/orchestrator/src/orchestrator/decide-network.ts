import {
  type ApprovalPolicy,
  type ApprovalRequest,
  approvalPolicyName,
  type NetworkApprovalContext,
  type ReviewDecision,
  type Reviewer,
} from '@ux/protocol/core';
import { ApprovalAbortedError } from '../approval/approval-aborted-error.js';
import { type ReviewerChain, requestApproval } from '../approval/request-approval.js';

/** A sandboxed command's proxy asks about a host in neither of the network lists. */
export interface NetworkDecisionRequest {
  host: string;
  port: number;
  /** How the command reached the proxy: a plain HTTP request, HTTP CONNECT, or SOCKS5. */
  protocol: 'http' | 'https' | 'socks5';
  /** The session's directory, shown with the question. */
  cwd: string;
  /** Withdrawn when no connection waits for the answer any more. */
  signal?: AbortSignal;
}

/**
 * The answer, in the proxy's terms (`NetworkAskAnswer` of `@ux/network-proxy`): for the waiting
 * connections only, or remembered by the proxy for the host until the session ends.
 */
export type NetworkDecision = 'allow_once' | 'allow_session' | 'deny' | 'deny_session';

export interface NetworkDecider {
  approvalPolicy: ApprovalPolicy;
  chain: ReviewerChain;
  reviewer: 'auto' | 'user';
  newApprovalId: () => string;
  announce: (request: ApprovalRequest) => void;
}

/**
 * Asks the reviewer chain about a host outside the allow list (deferred network approvals,
 * docs/reference/orchestrator.md §10): `never` (and a granular policy without sandbox approvals) refuses without asking; every
 * other policy asks the automatic reviewer or the user, once per host while the question is open (the
 * proxy shares it), with "allow once", "allow for this session", "deny" and, through a network policy
 * amendment, "deny for this session". Permission hooks judge commands, not hosts, and are not asked.
 * Any refusal, failure or abort is a denial; it never throws.
 */
export async function decideNetwork(
  decider: NetworkDecider,
  request: NetworkDecisionRequest,
): Promise<NetworkDecision> {
  if (!asksAboutHosts(decider.approvalPolicy)) return 'deny';
  const id = decider.newApprovalId();
  const context: NetworkApprovalContext = {
    host: request.host,
    protocol: request.protocol,
    port: request.port,
  };
  const question: ApprovalRequest = {
    call_id: `network-${id}`,
    approval_id: id,
    command: [],
    display_command: `connect to ${request.host}:${request.port} (${describeProtocol(request.protocol)})`,
    cwd: request.cwd,
    reason: `"${request.host}" is not in the sandbox's network allow list`,
    policy_reason: 'a sandboxed command asks to reach a host outside network.allow',
    unsandboxed: 'never',
    retry: false,
    network_approval_context: context,
    available_decisions: ['approved', 'approved_for_session', 'network_policy_amendment', 'denied', 'abort'],
  };
  decider.announce(question);
  // A "deny for the session" amendment is a refusal to the chain (it throws); the answer itself says
  // whether the proxy should remember it.
  let answer: unknown;
  const watched = (reviewer: Reviewer | undefined): Reviewer | undefined =>
    reviewer && {
      ...reviewer,
      review: async (asked, options) => {
        answer = await reviewer.review(asked, options);
        return answer as ReviewDecision;
      },
    };
  const chain: ReviewerChain = {
    ...decider.chain,
    user: watched(decider.chain.user)!,
    ...(decider.chain.autoReviewer ? { autoReviewer: watched(decider.chain.autoReviewer)! } : {}),
  };
  try {
    const decision = await requestApproval(chain, {
      request: question,
      // Permission hooks judge commands, not hosts.
      hooks: 'skip',
      reviewer: decider.reviewer,
      // The proxy remembers session answers by host; the chain's command cache must not answer for it.
      cacheKey: `network:${id}`,
      signal: request.signal ?? new AbortController().signal,
    });
    if (decision.type === 'approved_for_session') return 'allow_session';
    if (decision.type === 'network_policy_amendment')
      return decision.amendment.action === 'allow' ? 'allow_session' : 'deny_session';
    return 'allow_once';
  } catch (error) {
    // A refusal for this host's waiting connections; an abort also stops asking about it.
    if (ApprovalAbortedError.isInstance(error)) return 'deny_session';
    const amendment = (answer as { type?: string; amendment?: { action?: string } } | undefined)?.amendment;
    if (
      (answer as { type?: string } | undefined)?.type === 'network_policy_amendment' &&
      amendment?.action === 'deny'
    )
      return 'deny_session';
    return 'deny';
  }
}

/**
 * Whether an approval policy lets the proxy's questions reach anyone: not `never`, nor a granular
 * policy without sandbox approvals. A host that cannot ask should not hand the proxy an `ask` at all,
 * so a refusal reads "not in network.allow" rather than "refused when asked".
 */
export function asksAboutHosts(policy: ApprovalPolicy): boolean {
  if (approvalPolicyName(policy) === 'never') return false;
  return typeof policy !== 'object' || policy.granular.sandbox_approval;
}

function describeProtocol(protocol: NetworkDecisionRequest['protocol']): string {
  if (protocol === 'https') return 'HTTP CONNECT';
  if (protocol === 'socks5') return 'SOCKS5';
  return 'HTTP';
}
