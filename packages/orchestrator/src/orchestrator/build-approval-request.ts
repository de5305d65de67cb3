import type { ApprovalRequest, NetworkApprovalContext } from '@ux/protocol/core';
import { availableDecisions } from '../approval/available-decisions.js';
import type { PermissionHookRequest } from '../approval/permission-hook.js';
import { shellInvocation } from '../shell/shell-invocation.js';
import { shlexJoin } from '../shell/shlex-join.js';
import { type OrchestratorRequest, requestEnvironmentId } from './orchestrator-request.js';

/** One question about a whole command: the first one, or the one before a retry after a denial. */
export interface CommandQuestion {
  phase: 'initial' | 'retry';
  reason: string | undefined;
  policyReason: string;
  /** What approving means for the sandbox: outside it now, after a denial without asking again, or never. */
  unsandboxed: 'now' | 'after_denial' | 'never';
  hooks: 'allow_and_deny' | 'deny_only' | 'skip';
  networkContext?: NetworkApprovalContext | null;
}

/**
 * The approval request the reviewer chain and the listeners see. A rule amendment is offered only to
 * the user, for a plain command (no additional permissions, no network question); an allow rule runs
 * its commands without the sandbox unless the policy hides files.
 */
export function buildApprovalRequest(input: {
  request: OrchestratorRequest;
  question: CommandQuestion;
  /** The rule prefix the requirement proposes, if any. */
  amendment: string[] | undefined;
  denyRead: boolean;
  reviewer: 'auto' | 'user';
}): ApprovalRequest {
  const { request, question } = input;
  const environmentId = requestEnvironmentId(request);
  const additional = (request.sandboxPermissions ?? 'use_default') === 'with_additional_permissions';
  const network = question.networkContext ?? null;
  const offerAmendment =
    input.amendment !== undefined && !additional && network === null && input.reviewer === 'user';
  return {
    call_id: request.callId,
    ...(request.turnId ? { turn_id: request.turnId } : {}),
    command: [...request.argv],
    display_command: displayedCommand(request.argv),
    cwd: request.cwd,
    ...(environmentId === undefined ? {} : { environment_id: environmentId }),
    ...(question.reason === undefined ? {} : { reason: question.reason }),
    policy_reason: question.policyReason,
    unsandboxed: question.unsandboxed,
    retry: question.phase === 'retry',
    ...(offerAmendment && input.amendment
      ? { proposed_execpolicy_amendment: input.amendment, amendment_unsandboxed: !input.denyRead }
      : {}),
    ...(additional && request.additionalPermissions
      ? { additional_permissions: request.additionalPermissions }
      : {}),
    ...(network ? { network_approval_context: network } : {}),
    available_decisions: availableDecisions({
      additionalPermissions: additional,
      amendment: offerAmendment,
      network: network !== null,
      automatic: input.reviewer === 'auto',
    }),
  };
}

/** What the permission hooks are asked about a whole command (`tool: 'Bash'`, Claude Code's shape). */
export function permissionHookRequest(
  request: OrchestratorRequest,
  phase: 'initial' | 'retry',
): PermissionHookRequest {
  return {
    tool: 'Bash',
    command: displayedCommand(request.argv),
    argv: [...request.argv],
    cwd: request.cwd,
    ...(request.justification === undefined ? {} : { description: request.justification }),
    phase,
    call_id: request.callId,
  };
}

/** The command as typed: a shell invocation's script, else the quoted argv. */
export function displayedCommand(argv: readonly string[]): string {
  return shellInvocation(argv)?.script ?? shlexJoin(argv);
}
