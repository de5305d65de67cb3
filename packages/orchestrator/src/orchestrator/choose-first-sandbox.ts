import { type EffectivePolicy, hasDenyRead } from '@ux/protocol/core';
import type { ApprovalRequirement } from '../policy/approval-requirement.js';
import { needsSandbox } from '../sandbox/needs-sandbox.js';
import { widenPolicy } from '../sandbox/widen-policy.js';
import type { SelectedSandbox } from './attempt.js';
import type { OrchestratorRequest } from './orchestrator-request.js';

export interface FirstSandboxInput {
  /** The session policy. */
  policy: EffectivePolicy;
  request: Pick<OrchestratorRequest, 'sandboxPermissions' | 'additionalPermissions' | 'cwd'>;
  requirement: ApprovalRequirement;
  /** A managed network proxy is active (then every command is sandboxed). */
  managedNetwork: boolean;
  /** The backend for the attempt's policy in the request's execution environment (fails closed). */
  pick(policy: EffectivePolicy): Promise<Omit<SelectedSandbox, 'policy'>>;
}

/**
 * The first attempt's sandbox, chosen before anyone is asked so that nobody approves a command that
 * cannot run: `null` when the command runs unsandboxed (a rule's or an escalation's bypass, or a
 * policy that needs no sandbox), else the picked backend with the attempt's policy (the session's,
 * widened by approved additional permissions). Deny-read keeps the sandbox even for an approved
 * escalation: unsandboxed would expose the hidden files.
 */
export async function chooseFirstSandbox(input: FirstSandboxInput): Promise<SelectedSandbox | null> {
  const { policy, request, requirement } = input;
  const sandboxPermissions = request.sandboxPermissions ?? 'use_default';
  const attemptPolicy =
    sandboxPermissions === 'with_additional_permissions'
      ? widenPolicy(policy, request.additionalPermissions, request.cwd)
      : policy;
  const skipSandbox =
    (requirement.type === 'skip' && requirement.bypassSandbox) || sandboxPermissions === 'require_escalated';
  const wantSandbox =
    (hasDenyRead(policy.fileSystem) || !skipSandbox) &&
    needsSandbox(attemptPolicy, { managedNetwork: input.managedNetwork });
  if (!wantSandbox) return null;
  return { ...(await input.pick(attemptPolicy)), policy: attemptPolicy };
}
