import { ApprovalAbortedError } from '@ux/orchestrator';
import {
  type RefusalDecider,
  RejectedError,
  type RejectionSource,
  SandboxUnavailableError,
  UxError,
} from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import { renderNotRun } from './render-response.js';
import { failed, respond, type ToolResponse } from './tool-response.js';

const DECIDED_BY: Record<RejectionSource, RefusalDecider> = {
  user: 'person',
  reviewer: 'reviewer',
  // A permission hook is a program the person or the administrator configured to answer for them.
  hook: 'reviewer',
  policy: 'policy',
  unattended: 'nobody',
};

/** What to do after a refusal, by who decided. */
export const REFUSAL_NEXT_STEPS: Record<RefusalDecider, string> = {
  person:
    'The person refused this command: do not run it again as it is; do something else, or ask them what they want.',
  client:
    'The MCP client refused without asking a person: run only what the sandbox allows without approval, or ask the person to approve such commands in their client.',
  reviewer:
    'The automatic reviewer refused this command: do something else, or give a justification that explains why it is needed.',
  rule: 'A rule of this session forbids this command: do something else.',
  policy:
    "The session's policy does not allow this: run what stays within the sandbox (without sandbox_permissions), or ask the person to change the policy.",
  nobody:
    'Nobody can approve commands in this session: run only what the sandbox allows without approval, or ask the person to start ux with a policy that needs none.',
};

/** Who decided a `RejectedError`, for the model. */
export function decidedBy(error: RejectedError): RefusalDecider {
  return error.decidedBy ?? DECIDED_BY[error.source];
}

/** The refused response: nothing ran, `refusal` says who decided and why. */
export function refusedResponse(
  startedAt: number,
  fields: { command: string; decidedBy: RefusalDecider; reason: string; nextStep?: string },
  extra: Omit<Partial<ToolResponse>, 'text' | 'result'> = {},
): ToolResponse {
  return respond(
    renderNotRun({
      status: 'refused',
      wallTimeMs: Date.now() - startedAt,
      command: fields.command,
      refusal: { decided_by: fields.decidedBy, reason: fields.reason },
      nextStep: fields.nextStep ?? REFUSAL_NEXT_STEPS[fields.decidedBy],
    }),
    { success: false, ...extra },
  );
}

/**
 * The answer to a launch that threw: a refusal (a `RejectedError`: who decided, why) or a failure
 * (the sandbox cannot run, the process could not start, a bug), quoting the command as the call gave it.
 */
export function launchFailureResponse(startedAt: number, command: string, error: unknown): ToolResponse {
  // The reason may quote the command's words (a policy rule's match, a program that failed to start).
  const message = readableText(error instanceof Error ? error.message : String(error));
  if (ApprovalAbortedError.isInstance(error))
    return refusedResponse(
      startedAt,
      {
        command,
        decidedBy: 'person',
        reason: message,
        nextStep: 'The person stopped the turn: wait for their instructions.',
      },
      { error, interruptTurn: true },
    );
  if (RejectedError.isInstance(error))
    return refusedResponse(startedAt, { command, decidedBy: decidedBy(error), reason: message }, { error });
  if (SandboxUnavailableError.isInstance(error))
    return failed(startedAt, {
      code: error.code,
      message,
      command,
      nextStep: `Nothing ran: the sandbox this command needs cannot start here. Tell the person: ${error.fix}`,
      error,
    });
  if (UxError.isInstance(error))
    return failed(startedAt, {
      code: error.code,
      message,
      command,
      nextStep:
        'Nothing ran: it could not start, for the reason the message gives. Fix that and call again, or tell the person when it is out of your reach.',
      error,
    });
  return failed(startedAt, { code: 'internal_error', message, command });
}
