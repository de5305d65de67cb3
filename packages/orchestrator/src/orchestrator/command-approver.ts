import type { ApprovalRequest } from '@ux/protocol/core';
import { approvalKey } from '../approval/approval-store.js';
import { canonicalCommand } from '../approval/canonical-command.js';
import { type ReviewerChain, requestApproval } from '../approval/request-approval.js';
import type { BashParser } from '../shell/bash-parser.js';
import {
  buildApprovalRequest,
  type CommandQuestion,
  permissionHookRequest,
} from './build-approval-request.js';
import { type OrchestratorRequest, requestEnvironmentId } from './orchestrator-request.js';

export interface CommandApproverInput {
  request: OrchestratorRequest;
  bash: BashParser;
  chain: ReviewerChain;
  reviewer: 'auto' | 'user';
  /** The rule prefix the requirement proposes, if any. */
  amendment: string[] | undefined;
  denyRead: boolean;
  signal: AbortSignal;
  /** Tells the listeners, before the chain is asked. */
  announce(request: ApprovalRequest): void;
  /** Adds an approved rule amendment to the session's rules. */
  addAmendment(prefix: string[]): Promise<void>;
}

/**
 * Asks the reviewer chain about one command, as often as the run needs (first, then before a retry).
 * Resolves when approved (saving an approved rule amendment first); throws the chain's refusal.
 */
export function commandApprover(input: CommandApproverInput): (question: CommandQuestion) => Promise<void> {
  const { request } = input;
  const environmentId = requestEnvironmentId(request);
  // Made when someone is asked: a command that runs without a question never needs its key.
  const cacheKey = () =>
    approvalKey({
      command: canonicalCommand(request.argv, input.bash),
      cwd: request.cwd,
      tty: request.tty,
      sandbox_permissions: request.sandboxPermissions ?? 'use_default',
      ...(request.additionalPermissions ? { additional_permissions: request.additionalPermissions } : {}),
      ...(environmentId === undefined ? {} : { environment: environmentId }),
    });
  return async (question) => {
    const approvalRequest = buildApprovalRequest({
      request,
      question,
      amendment: input.amendment,
      denyRead: input.denyRead,
      reviewer: input.reviewer,
    });
    input.announce(approvalRequest);
    const decision = await requestApproval(input.chain, {
      request: approvalRequest,
      hookRequest: permissionHookRequest(request, question.phase),
      hooks: question.hooks,
      reviewer: input.reviewer,
      cacheKey: cacheKey(),
      signal: input.signal,
    });
    if (decision.type === 'approved_execpolicy_amendment') await input.addAmendment(decision.amendment);
  };
}
