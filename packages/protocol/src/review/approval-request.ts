import type { AdditionalPermissions } from '../policy/sandbox-permissions.js';
import type { ReviewDecisionType } from './review-decision.js';

/** The host a network approval is about. */
export interface NetworkApprovalContext {
  host: string;
  protocol: 'http' | 'https' | 'socks5-tcp' | 'socks5-udp' | string;
  port?: number;
}

/**
 * What a reviewer (hook, automatic reviewer, or the user) is asked. The same shape travels as the
 * `exec_approval_request` event. `command` is the argv before any sandbox wrapping.
 */
export interface ApprovalRequest {
  call_id: string;
  /** Set for per-execve approvals (zsh-fork interception); absent for whole-command approvals. */
  approval_id?: string;
  turn_id?: string;
  command: string[];
  cwd: string;
  /** Why approval is needed: the retry reason, the model's justification, or the policy's reason. */
  reason?: string;
  /** True when asking to retry a command the sandbox denied. */
  retry: boolean;
  proposed_execpolicy_amendment?: string[];
  additional_permissions?: AdditionalPermissions;
  network_approval_context?: NetworkApprovalContext;
  /** The answers the reviewer may give; anything else is treated as `denied`. */
  available_decisions: ReviewDecisionType[];
}
