import {
  type ApprovalPolicy,
  approvalPolicyName,
  RejectedError,
  type SandboxPermissions,
} from '@ux/protocol/core';

/**
 * The handler's check before anything else (docs/reference/orchestrator.md §2): asking for more than
 * the default sandbox (`require_escalated`, `with_additional_permissions`) is only possible under
 * `on-request`, unless the permissions were granted earlier. Returns the rejection, or `undefined` to go
 * on. The message keeps Codex's sentence with ux's policy names: `approval policy is never; reject
 * command — …`.
 */
export function escalationPreGate(input: {
  approvalPolicy: ApprovalPolicy;
  sandboxPermissions: SandboxPermissions;
  permissionsPreapproved: boolean;
}): RejectedError | undefined {
  if (input.sandboxPermissions === 'use_default' || input.permissionsPreapproved) return undefined;
  const name = approvalPolicyName(input.approvalPolicy);
  if (name === 'on-request') return undefined;
  return new RejectedError({
    reason: `approval policy is ${name}; reject command — you cannot ask for escalated permissions if the approval policy is ${name}`,
    source: 'policy',
  });
}
