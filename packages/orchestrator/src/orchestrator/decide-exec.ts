import { statSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import {
  type AdditionalPermissions,
  type ApprovalPolicy,
  type ApprovalRequest,
  type EffectivePolicy,
  hasDenyRead,
  readableText,
  resolveAccess,
  type SandboxPermissions,
} from '@ux/protocol/core';
import { ApprovalAbortedError } from '../approval/approval-aborted-error.js';
import { type ReviewerChain, requestApproval } from '../approval/request-approval.js';
import { execRequirement } from '../policy/approval-requirement.js';
import type { ExecPolicy } from '../policy/exec-policy.js';
import type { SandboxSelector } from '../sandbox/sandbox-selector.js';
import { widenPolicy } from '../sandbox/widen-policy.js';
import type { BashParser } from '../shell/bash-parser.js';
import { shlexJoin } from '../shell/shlex-join.js';
import type { SelectedSandbox } from './attempt.js';

/** One `execve` the zsh fork intercepted, with what its parent command was allowed. */
export interface ExecDecisionRequest {
  /** The tool call the command belongs to. */
  callId: string;
  turnId?: string;
  /** The path the shell handed to execve: absolute, or relative to `cwd`. */
  file: string;
  /** argv, `argv[0]` as the shell wrote it. */
  argv: readonly string[];
  /** The shell's working directory at the exec. */
  cwd: string;
  /** The command's own request: its sandbox permissions decide how an allowed exec may escalate. */
  parent: {
    sandboxPermissions?: SandboxPermissions;
    additionalPermissions?: AdditionalPermissions;
    /** The sandbox the command runs in; `null` when it runs unsandboxed (nothing to escalate from). */
    sandbox: SelectedSandbox | null;
    /** The session directory (the project root the policy's `project_roots` means). */
    projectRoot: string;
  };
  signal?: AbortSignal;
}

/** What the execve wrapper is told. */
export type ExecDecision =
  | { action: 'run' }
  | { action: 'deny'; reason: string /** The person aborted: the turn must stop. */; aborted?: boolean }
  | {
      action: 'escalate';
      /** `null`: outside any sandbox; else the sandbox to run this one program in. */
      sandbox: SelectedSandbox | null;
      /** The absolute program to run. */
      program: string;
    };

export interface ExecDecider {
  approvalPolicy: ApprovalPolicy;
  policy: EffectivePolicy;
  execPolicy: () => ExecPolicy;
  bash: (argv: readonly string[]) => Promise<BashParser>;
  platform: NodeJS.Platform;
  chain: ReviewerChain;
  sandboxes: SandboxSelector;
  newApprovalId: () => string;
  /** Who answers prompts: the automatic reviewer when the session routes them there, else the user. */
  reviewer: 'auto' | 'user';
  onApprovalRequest?: (request: ApprovalRequest) => void;
}

export const EXEC_FORBIDDEN = 'Execution forbidden by policy';

/**
 * The decision table of docs/reference/zsh-fork.md §4, per intercepted exec: a rule or heuristic
 * `forbidden` → deny; `prompt` → ask for this one exec (its own approval id, approve or abort only;
 * denied when prompts are off); `allow`, or an approved prompt → escalate when a rule drove the decision
 * (or the parent asked for escalation) and no deny-read policy forbids leaving the sandbox, else run in
 * place.
 * Escalation is refused (the exec runs in place, sandboxed) when the sandboxed command could have
 * written the program or a directory above it: an allow rule vouches for `touch`, not for a
 * `./touch` the agent built.
 */
export async function decideExec(decider: ExecDecider, request: ExecDecisionRequest): Promise<ExecDecision> {
  const program = isAbsolute(request.file) ? request.file : resolve(request.cwd, request.file);
  // zsh hands over its first PATH candidate for an unknown command: let the exec fail (127), ask nobody.
  if (!isExecutableFile(program)) return { action: 'run' };

  const command = [program, ...request.argv.slice(1)];
  const sandboxPermissions = request.parent.sandboxPermissions ?? 'use_default';
  const requirement = execRequirement({
    command,
    approvalPolicy: decider.approvalPolicy,
    fileSystemKind: decider.policy.fileSystem.kind,
    sandboxPermissions,
    execPolicy: decider.execPolicy(),
    bash: await decider.bash(command),
    platform: decider.platform,
  });
  if (requirement.decision === 'forbidden')
    return { action: 'deny', reason: `${EXEC_FORBIDDEN}: ${requirement.reason}` };

  if (requirement.decision === 'prompt') {
    const question: ApprovalRequest = {
      call_id: request.callId,
      approval_id: decider.newApprovalId(),
      ...(request.turnId ? { turn_id: request.turnId } : {}),
      command,
      display_command: shlexJoin(request.argv),
      cwd: request.cwd,
      policy_reason: `${requirement.policyReason} (a program the command runs)`,
      unsandboxed:
        request.parent.sandbox !== null && escalationWanted(decider, request, requirement.ruleDriven)
          ? 'now'
          : 'never',
      retry: false,
      available_decisions: ['approved', 'abort'],
    };
    decider.onApprovalRequest?.(question);
    try {
      await requestApproval(decider.chain, {
        request: question,
        hookRequest: {
          tool: 'Bash',
          command: shlexJoin(command),
          argv: command,
          cwd: request.cwd,
          phase: 'initial',
          call_id: request.callId,
        },
        hooks: 'allow_and_deny',
        reviewer: decider.reviewer,
        // Per-exec answers are never cached: only approve or abort are offered, each time.
        cacheKey: `exec:${question.approval_id}`,
        signal: request.signal ?? new AbortController().signal,
      });
    } catch (error) {
      if (ApprovalAbortedError.isInstance(error))
        return { action: 'deny', reason: 'aborted by the user', aborted: true };
      // A hook's or reviewer's words may quote the command; the wrapper prints this on its stderr.
      return { action: 'deny', reason: readableText(error instanceof Error ? error.message : String(error)) };
    }
  }

  if (request.parent.sandbox === null) return { action: 'run' };
  if (!escalationWanted(decider, request, requirement.ruleDriven)) return { action: 'run' };
  if (writableBySandbox(decider.policy, program, request)) return { action: 'run' };
  return {
    action: 'escalate',
    sandbox: escalationSandbox(decider, request, requirement.ruleDriven),
    program,
  };
}

/** Whether to escalate (docs/reference/zsh-fork.md §4): never under deny-read (hidden files would show). */
function escalationWanted(decider: ExecDecider, request: ExecDecisionRequest, ruleDriven: boolean): boolean {
  const unsandboxedAllowed = !hasDenyRead(decider.policy.fileSystem);
  switch (request.parent.sandboxPermissions ?? 'use_default') {
    case 'use_default':
      return unsandboxedAllowed && ruleDriven;
    case 'require_escalated':
      return unsandboxedAllowed;
    case 'with_additional_permissions':
      return true;
  }
}

/** Unsandboxed, except for additional permissions without a rule: the widened sandbox. */
function escalationSandbox(
  decider: ExecDecider,
  request: ExecDecisionRequest,
  ruleDriven: boolean,
): SelectedSandbox | null {
  const { parent } = request;
  if (
    parent.sandboxPermissions === 'with_additional_permissions' &&
    !(ruleDriven && !hasDenyRead(decider.policy.fileSystem)) &&
    parent.sandbox
  ) {
    return {
      backend: parent.sandbox.backend,
      policy: widenPolicy(decider.policy, parent.additionalPermissions, request.cwd),
    };
  }
  return null;
}

/** The program, or a directory above it, is one the sandboxed command may write. */
function writableBySandbox(policy: EffectivePolicy, program: string, request: ExecDecisionRequest): boolean {
  const context = { cwd: request.cwd, projectRoots: [request.parent.projectRoot] };
  for (let path = program; ; path = dirname(path)) {
    if (resolveAccess(policy.fileSystem, path, context) === 'write') return true;
    if (dirname(path) === path) return false;
  }
}

function isExecutableFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
}
