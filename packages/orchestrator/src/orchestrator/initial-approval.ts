import type { ApprovalRequirement } from '../policy/approval-requirement.js';
import type { SelectedSandbox } from './attempt.js';
import { decideRetry, type RetryGateInput } from './attempt-loop.js';
import type { CommandQuestion } from './build-approval-request.js';

/**
 * The approval step before the first attempt. A command the requirement says needs approval is asked
 * about (hooks first, unless strict); under strict automatic review so is one policy would let
 * through (without hooks). Resolves with whether the command is now approved (the retry gates then
 * skip asking again); `ask` throws for anything but an approval.
 */
export async function initialApproval(input: {
  requirement: ApprovalRequirement;
  strictAutoReview: boolean;
  justification: string | undefined;
  firstSandbox: SelectedSandbox | null;
  gates: Omit<RetryGateInput, 'alreadyApproved' | 'networkDenial'>;
  ask(question: CommandQuestion): Promise<void>;
}): Promise<boolean> {
  const { requirement, strictAutoReview } = input;
  if (requirement.type === 'needs_approval') {
    await input.ask({
      phase: 'initial',
      reason: requirement.reason ?? input.justification,
      policyReason: requirement.policyReason,
      unsandboxed: unsandboxedOnApproval(input.firstSandbox, input.gates),
      hooks: strictAutoReview ? 'skip' : 'allow_and_deny',
    });
    return true;
  }
  if (strictAutoReview) {
    await input.ask({
      phase: 'initial',
      reason: input.justification,
      policyReason: 'strict automatic review: every command goes to the automatic reviewer',
      unsandboxed: unsandboxedOnApproval(input.firstSandbox, input.gates),
      hooks: 'skip',
    });
    return true;
  }
  return false;
}

/**
 * What approving now means for the sandbox: outside it at once (no sandbox), after a denial without
 * another question (the retry gates skip asking once a command was approved), or never.
 */
export function unsandboxedOnApproval(
  firstSandbox: SelectedSandbox | null,
  gates: Omit<RetryGateInput, 'alreadyApproved' | 'networkDenial'>,
): 'now' | 'after_denial' | 'never' {
  if (firstSandbox === null) return 'now';
  const retry = decideRetry({ ...gates, alreadyApproved: true });
  return retry.retry && retry.sandbox === 'none' && !retry.ask ? 'after_denial' : 'never';
}
