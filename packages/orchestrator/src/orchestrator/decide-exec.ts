import { statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { isAbsolute, resolve } from 'node:path';
import {
  type AdditionalPermissions,
  type ApprovalPolicy,
  type ApprovalRequest,
  type EffectivePolicy,
  hasDenyRead,
  type SandboxPermissions,
} from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import { ApprovalAbortedError } from '../approval/approval-aborted-error.js';
import { type ReviewerChain, requestApproval } from '../approval/request-approval.js';
import { execRequirement } from '../policy/approval-requirement.js';
import type { ExecPolicy } from '../policy/exec-policy.js';
import type { SandboxSelector } from '../sandbox/sandbox-selector.js';
import { widenPolicy } from '../sandbox/widen-policy.js';
import type { BashParser } from '../shell/bash-parser.js';
import { executableName, shellInvocation } from '../shell/shell-invocation.js';
import { shlexJoin } from '../shell/shlex-join.js';
import type { SelectedSandbox } from './attempt.js';
import { type EscalationScope, escalationScope } from './escalation-scope.js';
import type { PinnedDirectory } from './pinned-directory.js';
import { programFile, programTrust, sameFile, startingPathProgram } from './program-trust.js';
import { workdirTrust } from './workdir-trust.js';

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
  /**
   * The environment the program would get: the sandboxed shell's, so nothing in it is trusted. Only its
   * `TMPDIR` is read, to add that directory to those the sandbox writes.
   */
  env?: Readonly<Record<string, string>>;
  /** The command's own request: its sandbox permissions decide how an allowed exec may escalate. */
  parent: {
    sandboxPermissions?: SandboxPermissions;
    additionalPermissions?: AdditionalPermissions;
    /** The sandbox the command runs in; `null` when it runs unsandboxed (nothing to escalate from). */
    sandbox: SelectedSandbox | null;
    /** The session directory (the project root the policy's `project_roots` means). */
    projectRoot: string;
    /** Where the command started (the policy's `cwd`); the project root when absent. */
    cwd?: string;
    /** The command's argv (`bash -lc SCRIPT`): a question names it as the program's parent. */
    argv?: readonly string[];
    /**
     * The environment the door gave the command (the session's, after ux's environment policy): its
     * `PATH` says which file a rule's bare program name stands for; its `HOME`, `XDG_CONFIG_HOME`,
     * `GIT_DIR` and `TMPDIR` are the session's. Absent: an empty one (bare names vouch for nothing).
     */
    env?: Readonly<Record<string, string>>;
  };
  signal?: AbortSignal;
}

/** What the execve wrapper is told. */
export type ExecDecision =
  | {
      action: 'run';
      /**
       * The same exec (same `file`, `argv`, `cwd`) of the same command gets this same answer as long as
       * the rules stay as they are (`onExecPolicyChange`): the decision read only those words, the
       * rules and what is fixed for the command (approval and sandbox policies, the parent's request),
       * no file, no environment, no approval. Set only for an unprompted `allow` that runs in place
       * without looking at the program file (`allow` from a rule or the heuristics, with no escalation
       * wanted, or a command that runs unsandboxed).
       */
      cacheable?: true;
      /**
       * Set when policy would have let the program out of the sandbox and ux kept it in: why (the
       * file the sandbox could have written or did write). Raw text: escape it before showing it.
       */
      inPlace?: string;
    }
  | { action: 'deny'; reason: string /** The person aborted: the turn must stop. */; aborted?: boolean }
  | {
      action: 'escalate';
      /** `null`: outside any sandbox; else the sandbox to run this one program in. */
      sandbox: SelectedSandbox | null;
      /** The absolute program to run. */
      program: string;
      /** Where to run it: the working directory the checks looked at (canonical when checked). */
      cwd: string;
      /**
       * Outside any sandbox: the working directory the checks looked at, still open. The caller hands
       * its identity to whoever enters `cwd` (the broker compares it, and the directories above it, with
       * what it opens, and refuses when they differ), then calls `release()` once that is done or will
       * never be. Absent when nothing was checked (a wider sandbox; a directory that could not be
       * opened, run after a person's approval).
       */
      cwdPin?: PinnedDirectory;
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
  /** When the session started (ms, host clock): files changed since then were changed in the session. */
  sessionStartMs: number;
}

export const EXEC_FORBIDDEN = 'Execution forbidden by policy';

/** What happens to an allowed exec, decided before anyone is asked. */
type Plan =
  /** `fixed`: decided without looking at any file (the same words always plan the same). */
  | { kind: 'run'; inPlace?: string; fixed?: true }
  | { kind: 'escalate'; sandbox: SelectedSandbox | null; cwd: string; pin?: PinnedDirectory }
  /** The command asked for escalation, and the working directory holds what the sandbox wrote. */
  | { kind: 'ask'; why: string; pin?: PinnedDirectory };

/**
 * The decision table of docs/reference/zsh-fork.md §4, per intercepted exec: a rule or heuristic
 * `forbidden` → deny; `prompt` → ask for this one exec (its own approval id, approve or abort only;
 * denied when prompts are off); `allow`, or an approved prompt → escalate when a rule drove the decision
 * (or the parent asked for escalation) and no deny-read policy forbids leaving the sandbox, else run in
 * place.
 * Escalation is decided on the program file, never its name or the shell's directory
 * (docs/zsh-fork.md, "Escalation and the sandbox's files"): a bare-name rule (`git`) vouches only for
 * the file the session's PATH finds; a program the sandbox could write or did write this session runs
 * in place; outside any sandbox, a working directory whose configuration the sandbox wrote keeps the
 * program in place too (or, when the command asked for escalation, is asked about).
 */
export async function decideExec(decider: ExecDecider, request: ExecDecisionRequest): Promise<ExecDecision> {
  const program = isAbsolute(request.file) ? request.file : resolve(request.cwd, request.file);
  // zsh hands over its first PATH candidate for an unknown command: let the exec fail (127), ask nobody.
  if (!isExecutableFile(program)) return { action: 'run' };

  const command = [program, ...request.argv.slice(1)];
  const sandboxPermissions = request.parent.sandboxPermissions ?? 'use_default';
  const rules = decider.execPolicy();
  const name = executableName(program);
  // Only an allow rule for the bare name needs the file identity (most execs match no such rule).
  const byName = allowsByName(rules, command);
  const pathFile = byName ? startingPathProgram(name, request.parent.env?.PATH) : undefined;
  const onStartingPath = !byName || sameFile(programFile(program), pathFile);
  const requirement = execRequirement({
    command,
    approvalPolicy: decider.approvalPolicy,
    fileSystemKind: decider.policy.fileSystem.kind,
    sandboxPermissions,
    // A rule for `git` vouches for the git the session's PATH finds, not for any file named git.
    execPolicy: onStartingPath ? rules : withoutNameAllowances(rules),
    bash: await decider.bash(command),
    platform: decider.platform,
  });
  if (requirement.decision === 'forbidden')
    return { action: 'deny', reason: `${EXEC_FORBIDDEN}: ${requirement.reason}` };

  let plan = planEscalation(decider, request, program, requirement.ruleDriven);
  // The directory the checks pinned goes with an escalation out of here; on every other way out it is
  // released here.
  const pin = plan.kind === 'escalate' || plan.kind === 'ask' ? plan.pin : undefined;
  let handedOver = false;
  const outside = (): ExecDecision => {
    handedOver = pin !== undefined;
    return {
      action: 'escalate',
      sandbox: null,
      program,
      cwd: pin?.path ?? request.cwd,
      ...(pin ? { cwdPin: pin } : {}),
    };
  };
  try {
    return await decideAllowed();
  } finally {
    if (!handedOver) pin?.release();
  }

  async function decideAllowed(): Promise<ExecDecision> {
    if (
      plan.kind === 'run' &&
      plan.inPlace === undefined &&
      request.parent.sandbox &&
      sandboxPermissions === 'use_default' &&
      !hasDenyRead(decider.policy.fileSystem) &&
      !onStartingPath
    ) {
      // An allow rule for the name matched, but not this file: say why it stays in (the file itself, when
      // the sandbox could have written it, else which file the rule means).
      const trust = programTrust(program, scopeFor(decider, request));
      plan = {
        kind: 'run',
        inPlace: !trust.trusted
          ? trust.why
          : pathFile
            ? `the rule for \`${name}\` vouches only for ${pathFile.real}, the ${name} the session's PATH finds, not for ${program}`
            : `the rule for \`${name}\` vouches only for the ${name} the session's PATH finds, and it finds none`,
      };
    }
    const question = (
      policyReason: string,
      decisions: ApprovalRequest['available_decisions'],
    ): ApprovalRequest => ({
      call_id: request.callId,
      approval_id: decider.newApprovalId(),
      ...(request.turnId ? { turn_id: request.turnId } : {}),
      command,
      display_command: shlexJoin(request.argv),
      ...(request.parent.argv
        ? {
            parent_command: shellInvocation(request.parent.argv)?.script ?? shlexJoin(request.parent.argv),
          }
        : {}),
      cwd: request.cwd,
      policy_reason: policyReason,
      unsandboxed: plan.kind === 'run' ? 'never' : 'now',
      retry: false,
      available_decisions: decisions,
    });

    if (requirement.decision === 'prompt') {
      const warning = plan.kind === 'ask' ? `; ${askReason(plan.why)}` : '';
      const asked = await ask(
        decider,
        request,
        command,
        question(`${requirement.policyReason} (a program the command runs)${warning}`, ['approved', 'abort']),
        'allow_and_deny',
      );
      if (asked !== 'approved') return asked;
      if (plan.kind === 'ask') return outside();
    }

    if (plan.kind === 'run') {
      // Nothing but the words, the rules and the command's fixed settings decided this: the broker may
      // answer the same exec again by itself (until the rules change).
      const cacheable =
        plan.fixed === true &&
        plan.inPlace === undefined &&
        requirement.decision === 'allow' &&
        !byName &&
        decider.execPolicy() === rules;
      return {
        action: 'run',
        ...(plan.inPlace ? { inPlace: plan.inPlace } : {}),
        ...(cacheable ? { cacheable: true as const } : {}),
      };
    }
    if (plan.kind === 'escalate')
      return plan.sandbox === null
        ? outside()
        : { action: 'escalate', sandbox: plan.sandbox, program, cwd: plan.cwd };
    // The command asked to run outside and this directory holds what the sandbox wrote: a person decides.
    if (!asksAboutEscalation(decider.approvalPolicy)) return { action: 'run', inPlace: plan.why };
    const asked = await ask(
      decider,
      request,
      command,
      question(askReason(plan.why), ['approved', 'denied', 'abort']),
      'deny_only',
    );
    if (asked === 'approved') return outside();
    if (asked.action === 'deny' && asked.aborted) return asked;
    return { action: 'run', inPlace: `${plan.why} (not approved to run outside: ${asked.reason})` };
  }
}

function askReason(why: string): string {
  return `the command asked to run outside the sandbox, but ${why}; outside, git or the program would read what the sandbox wrote and run it on the host. Approve only if you trust that file; otherwise it runs inside the sandbox`;
}

/** Where an allowed exec goes, before any question: in place (and why), outside, or a question. */
function planEscalation(
  decider: ExecDecider,
  request: ExecDecisionRequest,
  program: string,
  ruleDriven: boolean,
): Plan {
  if (request.parent.sandbox === null) return { kind: 'run', fixed: true };
  if (!escalationWanted(decider, request, ruleDriven)) return { kind: 'run', fixed: true };
  const scope = scopeFor(decider, request);
  const trust = programTrust(program, scope);
  if (!trust.trusted) return { kind: 'run', inPlace: trust.why };
  const sandbox = escalationSandbox(decider, request, ruleDriven);
  if (sandbox) return { kind: 'escalate', sandbox, cwd: request.cwd };
  const workdir = workdirTrust({
    cwd: request.cwd,
    argv: request.argv,
    programNames: [...new Set([executableName(program), executableName(trust.real)])],
    scope,
  });
  if (workdir.trusted) return { kind: 'escalate', sandbox: null, cwd: workdir.cwd, pin: workdir.pin };
  if (request.parent.sandboxPermissions === 'require_escalated')
    return { kind: 'ask', why: workdir.why, ...(workdir.pin ? { pin: workdir.pin } : {}) };
  workdir.pin?.release();
  return { kind: 'run', inPlace: workdir.why };
}

/** The writable roots and the session's start and environment that an escalation is judged against. */
function scopeFor(decider: ExecDecider, request: ExecDecisionRequest): EscalationScope {
  const env = request.parent.env ?? {};
  return escalationScope({
    policies: [decider.policy, ...(request.parent.sandbox ? [request.parent.sandbox.policy] : [])],
    projectRoot: request.parent.projectRoot,
    ...(request.parent.cwd ? { commandCwd: request.parent.cwd } : {}),
    tmpdirs: [env.TMPDIR, request.env?.TMPDIR, tmpdir()],
    sessionStartMs: decider.sessionStartMs,
    env,
    homeDir: env.HOME ?? homedir(),
  });
}

/** Asks one question; `approved`, or the exec's denial (abort: the turn stops). */
async function ask(
  decider: ExecDecider,
  request: ExecDecisionRequest,
  command: readonly string[],
  question: ApprovalRequest,
  hooks: 'allow_and_deny' | 'deny_only',
): Promise<'approved' | Extract<ExecDecision, { action: 'deny' }>> {
  decider.onApprovalRequest?.(question);
  try {
    await requestApproval(decider.chain, {
      request: question,
      hookRequest: {
        tool: 'Bash',
        command: shlexJoin(command),
        argv: [...command],
        cwd: request.cwd,
        phase: 'initial',
        call_id: request.callId,
      },
      hooks,
      reviewer: decider.reviewer,
      // Per-exec answers are never cached: each question is asked each time.
      cacheKey: `exec:${question.approval_id}`,
      signal: request.signal ?? new AbortController().signal,
    });
    return 'approved';
  } catch (error) {
    if (ApprovalAbortedError.isInstance(error))
      return { action: 'deny', reason: 'aborted by the user', aborted: true };
    // A hook's or reviewer's words may quote the command; the wrapper prints this on its stderr.
    return { action: 'deny', reason: readableText(error instanceof Error ? error.message : String(error)) };
  }
}

/** Whether a person may be asked to let an exec out (not under `never`, nor granular without sandbox approvals). */
function asksAboutEscalation(policy: ApprovalPolicy): boolean {
  if (policy === 'never') return false;
  if (typeof policy === 'object') return policy.granular.sandbox_approval;
  return true;
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

/**
 * The policy with bare-name allow rules kept to the paths `host_executable` declares: for a program
 * that is not the file the session's PATH finds for its name (`prompt` and `forbidden` rules still
 * apply by name, and rules that name the absolute path still match it).
 */
function withoutNameAllowances(policy: ExecPolicy): ExecPolicy {
  return {
    ...policy,
    matches: (words, options) => policy.matches(words, { ...options, resolvedProgram: false }),
  };
}

/** An allow rule matched the program only by its file name (which `withoutNameAllowances` takes back). */
function allowsByName(policy: ExecPolicy, command: readonly string[]): boolean {
  const allows = (candidate: ExecPolicy) =>
    candidate.matches(command, { resolvedProgram: true }).some((match) => match.rule.decision === 'allow');
  return allows(policy) && !allows(withoutNameAllowances(policy));
}

function isExecutableFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() ?? false;
}
