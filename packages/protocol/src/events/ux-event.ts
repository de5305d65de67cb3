import type { Enforcement } from '../plugins/sandbox-backend.js';
import type { SandboxCapability } from '../plugins/sandbox-capabilities.js';
import type { ApprovalRequest } from '../review/approval-request.js';

/** Which part of the door started a command. */
export type ExecCommandSource = 'unified_exec_startup' | 'unified_exec_interaction' | 'shell_command';

/** A user prompt (initial or retry), before any decision. */
export interface ExecApprovalRequestEvent extends ApprovalRequest {
  type: 'exec_approval_request';
}

/** Once per command, after a successful spawn. */
export interface ExecCommandBeginEvent {
  type: 'exec_command_begin';
  call_id: string;
  /** The door's process id as a string (the model's `session_id`). */
  process_id: string;
  /** The argv as the user would read it (before sandbox wrapping). */
  command: string[];
  cwd: string;
  source: ExecCommandSource;
  /** Which sandbox the command runs under (`none` when unsandboxed). */
  sandbox: string;
  /**
   * The level it runs under, when sandboxed (absent: `sandbox` is `none`): the backend, what it enforces (its probe's declaration; absent when a
   * remote server did not say) and how strongly this run's file-system and network limits hold. The
   * same object as the result's `sandbox` (`ExecResult`).
   */
  sandbox_level?: {
    backend: string;
    enforces?: SandboxCapability[];
    /** Backends preferred before this one that were not used, and why. */
    passed_over?: { backend: string; reason: string }[];
    file_system?: Enforcement;
    network?: Enforcement;
  };
  /**
   * Set when the command was blocked before it could start (a refusal, a policy that forbids it, no
   * sandbox that can run it): its `exec_command_end` follows at once with the same reason.
   */
  blocked?: BlockedCommand;
}

/** Why a command never started: `refused` (someone or something decided no) or `failed` (it could not start). */
export interface BlockedCommand {
  status: 'refused' | 'failed';
  /** The reason, as the model's result gives it. */
  reason: string;
}

/** A piece of output, cut at a UTF-8 boundary, at most 8192 bytes. */
export interface ExecCommandOutputDeltaEvent {
  type: 'exec_command_output_delta';
  call_id: string;
  stream: 'stdout' | 'stderr';
  chunk: Uint8Array;
}

/** After a `write_stdin` that wrote something or found the process still running. */
export interface TerminalInteractionEvent {
  type: 'terminal_interaction';
  /** The call id of the `exec_command` that started the process. */
  call_id: string;
  process_id: string;
  stdin: string;
}

/** Exactly once per started command. */
export interface ExecCommandEndEvent {
  type: 'exec_command_end';
  call_id: string;
  process_id: string;
  command: string[];
  cwd: string;
  source: ExecCommandSource;
  /** `-1` when the exit code is unknown (killed before it was read, or a failure). */
  exit_code: number;
  stdout: string;
  stderr: string;
  aggregated_output: string;
  duration_ms: number;
  formatted_output: string;
  /** `declined`: the command was refused before it started (`blocked` says why). */
  status: 'completed' | 'failed' | 'declined';
  /** Set when the command never started; the same as its `exec_command_begin`'s. */
  blocked?: BlockedCommand;
}

/**
 * The sandbox took back something a running command did: a protected path it created was moved away
 * (or removed) at once. The receipt of the call that observes it says the same.
 */
export interface SandboxNoticeEvent {
  type: 'sandbox_notice';
  /** The call id of the `exec_command` that started the process. */
  call_id: string;
  process_id: string;
  kind: 'protected_path_undone';
  path: string;
  /** Where it went, when it was kept. */
  moved_to?: string;
  /** Set when it could not be taken away. */
  error?: string;
  message: string;
}

/**
 * Something the user should know that is not any command's result: a shell snapshot that could not be
 * taken (and what the login files printed while it was tried), a feature falling back.
 */
export interface WarningEvent {
  type: 'warning';
  /** What it is about, for filtering: `shell_snapshot`. */
  source: 'shell_snapshot';
  message: string;
  /** Supporting text (what the login files printed), when there is some. */
  details?: string;
}

/** One file an `apply_patch` changes. */
export interface PatchChange {
  /** Absolute path. */
  path: string;
  kind: 'add' | 'update' | 'delete';
  /** The new path of an update with `*** Move to`. */
  move_path?: string;
  added: number;
  removed: number;
}

/** An intercepted `apply_patch` is about to change files (after policy and approval). */
export interface PatchApplyBeginEvent {
  type: 'patch_apply_begin';
  call_id: string;
  /** True when no one was asked: every path was inside the writable roots. */
  auto_approved: boolean;
  changes: PatchChange[];
}

/** An intercepted `apply_patch` finished: every change written, or none. */
export interface PatchApplyEndEvent {
  type: 'patch_apply_end';
  call_id: string;
  success: boolean;
  /** The text the model reads (`Success. Updated the following files: …`, or the error). */
  stdout: string;
  stderr: string;
  changes: PatchChange[];
}

/**
 * One exchange through the host's network proxy ended (a tunnel, or one forwarded HTTP request): where
 * a sandboxed command went, what was decided, and how much moved. Commands on a proxied network
 * produce one per connection.
 */
export interface NetworkAccessEvent {
  type: 'network_access';
  /** As the proxy decided it: lower case, no trailing dot, punycode, canonical IP. */
  host: string;
  port: number;
  /** `http` (a plain request), `https` (HTTP CONNECT, whatever runs inside), `socks5`. */
  protocol: 'http' | 'https' | 'socks5';
  decision: 'allowed' | 'denied' | 'asked_allowed' | 'asked_denied';
  /** The lists, an answer to this connection's question, or an answer remembered for the session. */
  decided_by: 'policy' | 'ask' | 'session';
  /** Why it was refused (`deny_list`, `not_in_allow_list`, `outside_cap`, `refused`, `local_address`, …). */
  denial?: string;
  /** The address connected to. */
  address?: string;
  bytes_up: number;
  bytes_down: number;
  duration_ms: number;
  /** An upstream failure (resolution, connection). */
  error?: string;
}

/** The turn was interrupted. Stored processes keep running. */
export interface TurnAbortedEvent {
  type: 'turn_aborted';
  reason: 'interrupted' | 'replaced' | 'review_ended';
}

export type UxEvent =
  | ExecApprovalRequestEvent
  | ExecCommandBeginEvent
  | ExecCommandOutputDeltaEvent
  | TerminalInteractionEvent
  | ExecCommandEndEvent
  | SandboxNoticeEvent
  | WarningEvent
  | PatchApplyBeginEvent
  | PatchApplyEndEvent
  | NetworkAccessEvent
  | TurnAbortedEvent;

export type UxEventType = UxEvent['type'];
