import type { ApprovalPolicy, EffectivePolicy } from '@ux/protocol/core';
import { type ApprovalRequirement, approvalRequirement } from '../policy/approval-requirement.js';
import type { ExecPolicy } from '../policy/exec-policy.js';
import type { BashParser } from '../shell/bash-parser.js';
import type { OrchestratorRequest } from './orchestrator-request.js';

/**
 * The approval requirement of a whole command under the session's policies and current rules.
 * Permissions granted earlier count as the default sandbox: they need no question of their own.
 */
export function commandRequirement(
  session: {
    approvalPolicy: ApprovalPolicy;
    policy: EffectivePolicy;
    execPolicy: ExecPolicy;
    platform: NodeJS.Platform;
  },
  request: OrchestratorRequest,
  bash: BashParser,
): ApprovalRequirement {
  const sandboxPermissions = request.sandboxPermissions ?? 'use_default';
  return approvalRequirement({
    argv: request.argv,
    approvalPolicy: session.approvalPolicy,
    fileSystemKind: session.policy.fileSystem.kind,
    sandboxPermissions: request.permissionsPreapproved ? 'use_default' : sandboxPermissions,
    ...(request.prefixRule ? { prefixRule: request.prefixRule } : {}),
    execPolicy: session.execPolicy,
    bash,
    platform: session.platform,
  });
}
