import {
  type ApprovalPolicy,
  type EffectivePolicy,
  hasDenyRead,
  RejectedError,
  type Reviewer,
} from '@ux/protocol/core';
import { isSandboxDenial } from '@ux/protocol-utils';
import type { ReviewerChain } from '../approval/request-approval.js';
import type { ApprovalRequirement } from '../policy/approval-requirement.js';
import type { BashParser } from '../shell/bash-parser.js';
import type { ApprovalAnnouncer } from './approval-announcer.js';
import type { Attempt, OrchestratorOutcome } from './attempt.js';
import { runAttempts } from './attempt-loop.js';
import { chooseFirstSandbox } from './choose-first-sandbox.js';
import { commandApprover } from './command-approver.js';
import { commandRequirement } from './command-requirement.js';
import type { EnvironmentSandboxPicker } from './environment-sandbox-picker.js';
import { escalationPreGate } from './escalation-pre-gate.js';
import { initialApproval } from './initial-approval.js';
import { type OrchestratorRequest, requestEnvironmentId } from './orchestrator-request.js';
import { retryPolicyReason } from './retry-policy-reason.js';
import { reviewRoute } from './review-route.js';
import type { SessionExecPolicy } from './session-exec-policy.js';
import { validateRequest } from './validate-request.js';

/** What `runCommand` and `checkedRequirement` decide with: the orchestrator's session-wide parts. */
export interface OrchestratorSession {
  approvalPolicy: ApprovalPolicy;
  policy: EffectivePolicy;
  platform: NodeJS.Platform;
  chain: ReviewerChain;
  autoReviewer: Reviewer | undefined;
  /** `settings.strictAutoReview`: the default of each request's `strictAutoReview`. */
  strictAutoReview: boolean;
  escalateOnFailure: boolean;
  managedNetwork: boolean;
  execPolicy: SessionExecPolicy;
  announcer: ApprovalAnnouncer;
  sandboxPicker: EnvironmentSandboxPicker;
  bashParserFor(argv: readonly string[]): Promise<BashParser>;
}

/** The request checked (its fields, its execution environment), with its parser. */
async function checkedRequest(
  session: OrchestratorSession,
  request: OrchestratorRequest,
): Promise<BashParser> {
  validateRequest(request);
  session.sandboxPicker.assertKnown(requestEnvironmentId(request));
  return session.bashParserFor(request.argv);
}

/** `Orchestrator.requirement`: the approval requirement alone, after the same checks as a run. */
export async function checkedRequirement(
  session: OrchestratorSession,
  request: OrchestratorRequest,
): Promise<ApprovalRequirement> {
  const bash = await checkedRequest(session, request);
  return commandRequirement({ ...session, execPolicy: session.execPolicy.current() }, request, bash);
}

/**
 * `Orchestrator.run`, in its order: the request's checks, the escalation pre-gate, the requirement
 * (forbidden throws), the first sandbox (chosen before anyone is asked), the approval step, then the
 * attempts with the retry gates, whose retry question goes through the same approver.
 */
export async function runCommand<T>(
  session: OrchestratorSession,
  request: OrchestratorRequest,
  attempt: Attempt<T>,
): Promise<OrchestratorOutcome<T>> {
  const bash = await checkedRequest(session, request);
  const preGate = escalationPreGate({
    approvalPolicy: session.approvalPolicy,
    sandboxPermissions: request.sandboxPermissions ?? 'use_default',
    permissionsPreapproved: request.permissionsPreapproved ?? false,
  });
  if (preGate) throw preGate;

  const requirement = commandRequirement(
    { ...session, execPolicy: session.execPolicy.current() },
    request,
    bash,
  );
  if (requirement.type === 'forbidden')
    throw new RejectedError({
      reason: requirement.reason,
      source: 'policy',
      ...(requirement.byRule ? { decidedBy: 'rule' as const } : {}),
    });

  const environmentId = requestEnvironmentId(request);
  const firstSandbox = await chooseFirstSandbox({
    policy: session.policy,
    request,
    requirement,
    managedNetwork: session.managedNetwork,
    pick: (attemptPolicy) => session.sandboxPicker.pick(environmentId, attemptPolicy),
  });

  const strict = request.strictAutoReview ?? session.strictAutoReview;
  const denyRead = hasDenyRead(session.policy.fileSystem);
  const gates = {
    approvalPolicy: session.approvalPolicy,
    denyRead,
    strictAutoReview: strict,
    escalateOnFailure: session.escalateOnFailure,
    fileSystemRestricted: session.policy.fileSystem.kind === 'restricted',
  };
  const ask = commandApprover({
    request,
    bash,
    chain: session.chain,
    reviewer: reviewRoute({
      strictAutoReview: strict,
      autoReviewer: session.autoReviewer,
      approvalPolicy: session.approvalPolicy,
    }),
    amendment: requirement.proposedAmendment,
    denyRead,
    signal: request.signal ?? new AbortController().signal,
    announce: session.announcer.announce,
    addAmendment: session.execPolicy.addAmendment,
  });
  const alreadyApproved = await initialApproval({
    requirement,
    strictAutoReview: strict,
    justification: request.justification,
    firstSandbox,
    gates,
    ask,
  });

  return runAttempts({
    firstSandbox,
    attempt,
    callId: request.callId,
    ...(request.signal ? { signal: request.signal } : {}),
    gates: { ...gates, alreadyApproved },
    isDenial: (sandbox, evidence) => isSandboxDenial(sandbox.backend, evidence, session.platform),
    approveRetry: (retry) =>
      ask({
        phase: 'retry',
        reason: retry.reason,
        policyReason: retryPolicyReason(retry),
        unsandboxed: retry.sandbox === 'none' ? 'now' : 'never',
        hooks: strict ? 'skip' : 'deny_only',
        networkContext: retry.networkContext,
      }),
  });
}
