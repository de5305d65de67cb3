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
  /**
   * The command as it was typed: the script of a `bash -lc '…'` invocation, else the quoted argv.
   * Show this to people; `command` is what runs.
   */
  display_command?: string;
  /**
   * For a per-execve approval: the command that is running the program (as typed, like
   * `display_command`), so a person knows which script is asking.
   */
  parent_command?: string;
  cwd: string;
  /**
   * The remote environment the command runs in (a configured `[environments.NAME]`); absent for
   * this machine. `cwd` and `command` are paths and programs there.
   */
  environment_id?: string;
  /** Why approval is needed: the retry reason, the model's justification, or the policy's reason. */
  reason?: string;
  /**
   * Why ux's policy asks, in its own words (the rule, the dangerous command, the approval policy, the
   * sandbox escalation asked for, the sandbox denial). `reason` may be the model's justification instead.
   */
  policy_reason?: string;
  /**
   * Where an approved command runs: `now` outside the sandbox; `after_denial` in the sandbox, and
   * again without it, without another question, if the sandbox blocks it; `never` only in the sandbox
   * (a rerun outside it would be asked for again, or is not allowed).
   */
  unsandboxed?: 'now' | 'after_denial' | 'never';
  /** True when asking to retry a command the sandbox denied. */
  retry: boolean;
  proposed_execpolicy_amendment?: string[];
  /** Whether commands a saved `proposed_execpolicy_amendment` allows will run outside the sandbox. */
  amendment_unsandboxed?: boolean;
  additional_permissions?: AdditionalPermissions;
  network_approval_context?: NetworkApprovalContext;
  /** The answers the reviewer may give; anything else is treated as `denied`. */
  available_decisions: ReviewDecisionType[];
}
