import { randomUUID } from 'node:crypto';
import {
  type AdditionalPermissions,
  type ApprovalPolicy,
  type ApprovalRequest,
  approvalPolicyName,
  type EffectivePolicy,
  effectivePolicyFromSandboxPolicy,
  hasDenyRead,
  InvalidArgumentsError,
  isAbsolutePath,
  isSandboxDenial,
  MissingCommandLineError,
  type NetworkApprovalContext,
  probeSafely,
  RejectedError,
  type Reviewer,
  type SandboxBackend,
  type SandboxDeniedError,
  type SandboxPermissions,
  type SandboxPolicy,
  type SandboxRegistry,
  SandboxUnavailableError,
  visibleJson,
} from '@ux/protocol/core';
import { absentReviewer } from '../approval/absent-reviewer.js';
import { type ApprovalStore, approvalKey, createApprovalStore } from '../approval/approval-store.js';
import { availableDecisions } from '../approval/available-decisions.js';
import { canonicalCommand } from '../approval/canonical-command.js';
import type { PermissionHook, PermissionHookRequest } from '../approval/permission-hook.js';
import { requestApproval } from '../approval/request-approval.js';
import { type ApprovalRequirement, approvalRequirement } from '../policy/approval-requirement.js';
import { createExecPolicy, type ExecPolicy } from '../policy/exec-policy.js';
import type { RuleWriter } from '../policy/rule-file-appender.js';
import { needsSandbox } from '../sandbox/needs-sandbox.js';
import { createSandboxSelector, type SandboxSelector } from '../sandbox/sandbox-selector.js';
import { widenPolicy } from '../sandbox/widen-policy.js';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';
import { shellInvocation } from '../shell/shell-invocation.js';
import { shlexJoin } from '../shell/shlex-join.js';
import { needsBashGrammar, SIMPLE_SCRIPT_PARSER } from '../shell/simple-script.js';
import type { Attempt, OrchestratorOutcome, SelectedSandbox } from './attempt.js';
import { decideRetry, runAttempts } from './attempt-loop.js';
import { decideExec, type ExecDecision, type ExecDecisionRequest } from './decide-exec.js';
import { decideNetwork, type NetworkDecision, type NetworkDecisionRequest } from './decide-network.js';
import { decidePatch, type PatchDecision, type PatchDecisionRequest } from './decide-patch.js';
import { escalationPreGate } from './escalation-pre-gate.js';
import { preciseNowMs } from './session-changes.js';

export interface OrchestratorSettings {
  /** Registered sandbox backends; the orchestrator imports none itself. */
  sandboxRegistry: SandboxRegistry;
  /** Backend ids the config enables, in order of preference; default every registered one. */
  enabledBackends?: readonly string[];
  /** Backend ids managed requirements allow; default any. */
  allowedBackends?: readonly string[];
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
  approvalPolicy: ApprovalPolicy;
  /** What sandboxed commands may do: the split form, or the classic `SandboxPolicy`. */
  policy: EffectivePolicy | SandboxPolicy;
  /** A managed network proxy is active (then every command is sandboxed). */
  managedNetwork?: boolean;
  /**
   * Whether a sandbox denial in the early-exit window may lead to a second attempt (the retry gates:
   * policy, deny-read, asking again); default true, as unified exec does. `false` returns every denial
   * as it is: for a host whose tool must never run a command twice.
   */
  escalateOnFailure?: boolean;
  /** Prefix rules; default none. Amendments approved in this session are added to it. */
  execPolicy?: ExecPolicy;
  /** Checked before any reviewer, in order. */
  permissionHooks?: readonly PermissionHook[];
  /**
   * An automatic reviewer. It answers instead of the user under `on-request` and `granular` (Codex's
   * `approvals_reviewer = auto_review`), and for every approval of a turn with `strictAutoReview`.
   */
  autoReviewer?: Reviewer;
  /**
   * Strict automatic review for every request that does not set `strictAutoReview` itself: each
   * command, even one policy would run without asking, and each retry goes to `autoReviewer`, without
   * permission hooks; intercepted execs, patches and network questions go to it too. Default false.
   * Requires `autoReviewer`.
   */
  strictAutoReview?: boolean;
  /**
   * The user. Optional: without one, a question that arises is refused at once as unattended
   * (`absentReviewer`), so a session under approval policy `never` needs none.
   */
  reviewer?: Reviewer;
  /** The session's approval cache; default a fresh one (one per orchestrator). */
  approvalStore?: ApprovalStore;
  /** Saves an `approved_execpolicy_amendment` (e.g. `createRuleFileAppender(path)`); default: session only. */
  ruleWriter?: RuleWriter;
  /** Default: the shared tree-sitter-bash parser, loaded on the first run. */
  bashParser?: BashParser;
  /**
   * Loads the grammar when a script first needs it (default `loadBashParser`): a host can wrap it to
   * prepare the process first (the CLI keeps WebAssembly on V8's baseline compiler from then on).
   */
  loadBashParser?: () => Promise<BashParser>;
  /** Problems that do not stop a command (a rule that could not be saved). */
  onWarning?: (message: string) => void;
  /** Approval ids for per-exec questions; default random UUIDs. */
  newApprovalId?: () => string;
  /**
   * The sandbox of each remote environment, by environment id: the backend that carries the policy
   * to the exec-server there (`createExecServerSandbox` of `@ux/exec-server-client`). A request for
   * one of them is sandboxed by that backend only, never by a local one; the registry, enabled and
   * allowed backends are this machine's. Its probe runs for every sandboxed request (it is a live
   * connection: an environment down now may be back later), and a failed probe fails closed.
   */
  environments?: Readonly<Record<string, SandboxBackend>>;
  /**
   * When the session started (ms since the epoch, host clock, may be fractional); default: when the
   * orchestrator was created, to the microsecond. A file whose `ctime` is at or after it was created or changed during the session, by the
   * sandbox or anyone else, and is not trusted outside the sandbox (an intercepted program, the
   * configuration of its working directory: docs/zsh-fork.md).
   */
  sessionStartMs?: number;
}

/** One command to decide on and run. */
export interface OrchestratorRequest {
  callId: string;
  turnId?: string;
  /** The argv before sandboxing, e.g. `['/bin/bash', '-lc', 'cargo test']`. */
  argv: readonly string[];
  /** Absolute working directory. */
  cwd: string;
  tty: boolean;
  /** Default `use_default`. */
  sandboxPermissions?: SandboxPermissions;
  /** Required with `with_additional_permissions`, refused otherwise. */
  additionalPermissions?: AdditionalPermissions;
  /** The requested permissions were granted earlier (`request_permissions`); no pre-gate, no prompt for them. */
  permissionsPreapproved?: boolean;
  /** The model's reason, shown when asking. */
  justification?: string;
  /** The model's suggested prefix for a saved rule. */
  prefixRule?: readonly string[];
  /**
   * This turn sends every approval, retries included, to the automatic reviewer; default
   * `settings.strictAutoReview`.
   */
  strictAutoReview?: boolean;
  /** Aborts pending reviews (they answer `abort`); passed on to the attempts. */
  signal?: AbortSignal;
  /**
   * The remote environment it runs in (a key of `settings.environments`); default this machine. An
   * approval for the session covers the same command in the same environment only.
   */
  environment?: string;
}

export interface Orchestrator {
  /**
   * Decides, asks, picks the sandbox, runs `attempt` and applies the retry gates. Resolves with the
   * outcome (completed, or a sandbox denial to render as an ordinary receipt). Rejects with
   * `RejectedError` (policy, hook, user, reviewer; `ApprovalAbortedError` when the turn must stop),
   * `SandboxUnavailableError` (fail closed), `MissingCommandLineError` / `InvalidArgumentsError`, or
   * whatever `attempt` threw.
   */
  run<T>(request: OrchestratorRequest, attempt: Attempt<T>): Promise<OrchestratorOutcome<T>>;
  /**
   * Decides one `execve` the zsh fork intercepted inside a command this orchestrator let run (zsh-fork
   * docs/reference/zsh-fork.md §4): run it in place, deny it, or escalate it. Never throws for a refusal.
   */
  decideExec(request: ExecDecisionRequest): Promise<ExecDecision>;
  /**
   * Whether an intercepted `apply_patch` may write its files: refused for protected and hidden paths,
   * applied at once inside the writable roots, asked otherwise (refused under `never`).
   */
  decidePatch(request: PatchDecisionRequest): Promise<PatchDecision>;
  /**
   * Whether a sandboxed command may reach a host outside the network allow list: the host's proxy
   * asks (its `ask`), the reviewer chain answers (refused without asking under `never`). Never throws.
   */
  decideNetwork(request: NetworkDecisionRequest): Promise<NetworkDecision>;
  /**
   * Subscribes to every question put to the reviewer chain, whole commands and intercepted execs
   * alike (the door turns them into `exec_approval_request` events). Returns the unsubscribe function.
   */
  onApprovalRequest(listener: (request: ApprovalRequest) => void): () => void;
  /** The approval requirement alone, without asking or running (for explanations and dry runs). */
  requirement(request: OrchestratorRequest): Promise<ApprovalRequirement>;
  /** The current rules, including amendments approved in this session. */
  readonly execPolicy: ExecPolicy;
  /**
   * Subscribes to changes of `execPolicy` (an amendment approved in this session). Listeners run
   * synchronously, right after the new rules are in place and before anything decides with them (the
   * zsh fork's broker forgets its cached Run answers here). Returns the unsubscribe function.
   */
  onExecPolicyChange(listener: () => void): () => void;
  /** The sandbox policy commands run under (every environment's), for describing and naming denials. */
  readonly policy: EffectivePolicy;
  /** The approval policy: whether a call can ask for more than the sandbox gives (`on-request`). */
  readonly approvalPolicy: ApprovalPolicy;
  readonly sandboxes: SandboxSelector;
}

/**
 * Policy in one place: exec-policy rules and command safety, the approval requirement and cache, the
 * reviewer chain, sandbox selection, the deny heuristic and the retry gates. It never spawns: the
 * caller's `attempt` does, so PTY, pipe and remote runs share every decision.
 */
export function createOrchestrator(settings: OrchestratorSettings): Orchestrator {
  const sessionStartMs = settings.sessionStartMs ?? preciseNowMs();
  if (settings.strictAutoReview && settings.autoReviewer === undefined)
    throw new InvalidArgumentsError({
      tool: 'orchestrator',
      issues: [
        {
          path: 'strictAutoReview',
          message:
            'is true but no autoReviewer is set: strict automatic review sends every approval to the automatic reviewer; pass autoReviewer, or leave strictAutoReview false',
        },
      ],
    });
  const platform = settings.platform ?? process.platform;
  const policy =
    'type' in settings.policy ? effectivePolicyFromSandboxPolicy(settings.policy) : settings.policy;
  const approvalPolicy = settings.approvalPolicy;
  const sandboxes = createSandboxSelector({
    sandboxRegistry: settings.sandboxRegistry,
    platform,
    ...(settings.enabledBackends ? { enabledBackends: settings.enabledBackends } : {}),
    ...(settings.allowedBackends ? { allowedBackends: settings.allowedBackends } : {}),
  });
  const store = settings.approvalStore ?? createApprovalStore();
  const chain = {
    hooks: settings.permissionHooks ?? [],
    ...(settings.autoReviewer ? { autoReviewer: settings.autoReviewer } : {}),
    user: settings.reviewer ?? absentReviewer(),
    store,
  };
  const strictByDefault = settings.strictAutoReview ?? false;
  const routedToAutoReviewer =
    settings.autoReviewer !== undefined &&
    ['on-request', 'granular'].includes(approvalPolicyName(approvalPolicy));
  let execPolicy = settings.execPolicy ?? createExecPolicy();
  // A request whose scripts are all one simple command of literal words needs no grammar: a
  // short-lived host (`ux exec -- make test`) then never loads it.
  const loadGrammar = settings.loadBashParser ?? loadBashParser;
  const parserFor = (argv: readonly string[]): Promise<BashParser> => {
    if (settings.bashParser) return Promise.resolve(settings.bashParser);
    return needsBashGrammar(argv) ? loadGrammar() : Promise.resolve(SIMPLE_SCRIPT_PARSER);
  };

  const evaluate = (request: OrchestratorRequest, bash: BashParser): ApprovalRequirement => {
    const sandboxPermissions = request.sandboxPermissions ?? 'use_default';
    return approvalRequirement({
      argv: request.argv,
      approvalPolicy,
      fileSystemKind: policy.fileSystem.kind,
      sandboxPermissions: request.permissionsPreapproved ? 'use_default' : sandboxPermissions,
      ...(request.prefixRule ? { prefixRule: request.prefixRule } : {}),
      execPolicy,
      bash,
      platform,
    });
  };

  const policyListeners = new Set<() => void>();
  const saveAmendment = async (prefix: string[]) => {
    execPolicy = execPolicy.withRule({
      pattern: prefix,
      decision: 'allow',
      source: { file: '(approved in this session)' },
    });
    for (const listener of policyListeners) {
      try {
        listener();
      } catch (error) {
        settings.onWarning?.(
          `a rule-change listener threw: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    if (!settings.ruleWriter) return;
    try {
      await settings.ruleWriter(prefix);
    } catch (error) {
      settings.onWarning?.(
        `the rule ${visibleJson(prefix)} applies for this session but could not be saved: ${
          error instanceof Error ? error.message : String(error)
        }`,
      );
    }
  };

  const approvalListeners = new Set<(request: ApprovalRequest) => void>();
  const announce = (request: ApprovalRequest) => {
    for (const listener of approvalListeners) {
      try {
        listener(structuredClone(request));
      } catch (error) {
        settings.onWarning?.(
          `an approval listener threw: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
  };
  const knownEnvironment = (request: OrchestratorRequest) => {
    const { environment } = request;
    if (environment === undefined || settings.environments?.[environment]) return;
    const known = Object.keys(settings.environments ?? {});
    throw new InvalidArgumentsError({
      tool: 'orchestrator',
      issues: [
        {
          path: 'environment',
          message: `unknown environment "${environment}"; known remote environments: ${known.join(', ') || '(none)'}`,
        },
      ],
    });
  };
  // A remote environment's sandbox is applied there; its probe is a live check of the connection.
  // Local: the first backend that enforces everything the attempt's policy needs (fail closed).
  // Remote: the exec-server there applies the same rule to the policy it is sent.
  const selectSandbox = async (
    environment: string | undefined,
    attemptPolicy: EffectivePolicy,
  ): Promise<Omit<SelectedSandbox, 'policy'>> => {
    if (environment === undefined) return sandboxes.choose(attemptPolicy);
    const backend = settings.environments![environment]!;
    const probe = await probeSafely(backend);
    if (probe.available) return { backend, ...(probe.enforces ? { enforces: probe.enforces } : {}) };
    throw new SandboxUnavailableError({
      backend: backend.id,
      // The probe's reason usually names the environment already ("cannot reach environment …").
      reason: probe.reason.includes(`environment "${environment}"`)
        ? probe.reason
        : `environment "${environment}": ${probe.reason}`,
      fix: probe.fix,
    });
  };
  const decider = {
    approvalPolicy,
    policy,
    execPolicy: () => execPolicy,
    bash: parserFor,
    platform,
    chain,
    sandboxes,
    newApprovalId: settings.newApprovalId ?? randomUUID,
    // Intercepted execs, patches and network questions: strict by default sends them to the reviewer too.
    reviewer: strictByDefault || routedToAutoReviewer ? ('auto' as const) : ('user' as const),
    onApprovalRequest: (request: ApprovalRequest) => announce(request),
    sessionStartMs,
  };

  return {
    get execPolicy() {
      return execPolicy;
    },
    policy,
    approvalPolicy,
    sandboxes,

    decideExec: (request) => decideExec(decider, request),
    decidePatch: (request) =>
      decidePatch(
        {
          approvalPolicy,
          policy,
          chain,
          reviewer: decider.reviewer,
          newApprovalId: decider.newApprovalId,
          announce,
        },
        request,
      ),
    decideNetwork: (request) =>
      decideNetwork(
        {
          approvalPolicy,
          chain,
          reviewer: decider.reviewer,
          newApprovalId: decider.newApprovalId,
          announce,
        },
        request,
      ),
    onApprovalRequest(listener) {
      approvalListeners.add(listener);
      return () => approvalListeners.delete(listener);
    },

    onExecPolicyChange(listener) {
      policyListeners.add(listener);
      return () => policyListeners.delete(listener);
    },

    async requirement(request) {
      validate(request);
      knownEnvironment(request);
      return evaluate(request, await parserFor(request.argv));
    },

    async run(request, attempt) {
      validate(request);
      knownEnvironment(request);
      const bash = await parserFor(request.argv);
      const sandboxPermissions = request.sandboxPermissions ?? 'use_default';
      const preGate = escalationPreGate({
        approvalPolicy,
        sandboxPermissions,
        permissionsPreapproved: request.permissionsPreapproved ?? false,
      });
      if (preGate) throw preGate;

      const requirement = evaluate(request, bash);
      if (requirement.type === 'forbidden')
        throw new RejectedError({
          reason: requirement.reason,
          source: 'policy',
          ...(requirement.byRule ? { decidedBy: 'rule' as const } : {}),
        });

      // Choose the first sandbox before asking anyone, so nobody approves a command that cannot run.
      const denyRead = hasDenyRead(policy.fileSystem);
      const attemptPolicy =
        sandboxPermissions === 'with_additional_permissions'
          ? widenPolicy(policy, request.additionalPermissions, request.cwd)
          : policy;
      const skipSandbox =
        (requirement.type === 'skip' && requirement.bypassSandbox) ||
        sandboxPermissions === 'require_escalated';
      // Deny-read keeps the sandbox even for an approved escalation: unsandboxed would expose the hidden files.
      const wantSandbox =
        (denyRead || !skipSandbox) &&
        needsSandbox(attemptPolicy, { managedNetwork: settings.managedNetwork ?? false });
      const firstSandbox: SelectedSandbox | null = wantSandbox
        ? { ...(await selectSandbox(request.environment, attemptPolicy)), policy: attemptPolicy }
        : null;

      const strict = request.strictAutoReview ?? strictByDefault;
      const reviewer = strict || routedToAutoReviewer ? 'auto' : 'user';
      const amendment = requirement.proposedAmendment;
      // Made when someone is asked: a command that runs without a question never needs its key.
      const cacheKey = () =>
        approvalKey({
          command: canonicalCommand(request.argv, bash),
          cwd: request.cwd,
          tty: request.tty,
          sandbox_permissions: sandboxPermissions,
          ...(request.additionalPermissions ? { additional_permissions: request.additionalPermissions } : {}),
          ...(request.environment === undefined ? {} : { environment: request.environment }),
        });
      const signal = request.signal ?? new AbortController().signal;

      const gates = {
        approvalPolicy,
        denyRead,
        strictAutoReview: strict,
        escalateOnFailure: settings.escalateOnFailure ?? true,
        fileSystemRestricted: policy.fileSystem.kind === 'restricted',
      };
      const ask = async (question: {
        phase: 'initial' | 'retry';
        reason: string | undefined;
        policyReason: string;
        unsandboxed: 'now' | 'after_denial' | 'never';
        hooks: 'allow_and_deny' | 'deny_only' | 'skip';
        networkContext?: NetworkApprovalContext | null;
      }) => {
        const additional = sandboxPermissions === 'with_additional_permissions';
        const network = question.networkContext ?? null;
        const offerAmendment =
          amendment !== undefined && !additional && network === null && reviewer === 'user';
        const approvalRequest: ApprovalRequest = {
          call_id: request.callId,
          ...(request.turnId ? { turn_id: request.turnId } : {}),
          command: [...request.argv],
          display_command: displayed(request.argv),
          cwd: request.cwd,
          ...(request.environment === undefined ? {} : { environment_id: request.environment }),
          ...(question.reason === undefined ? {} : { reason: question.reason }),
          policy_reason: question.policyReason,
          unsandboxed: question.unsandboxed,
          retry: question.phase === 'retry',
          // An allow rule runs its commands without the sandbox, unless the policy hides files.
          ...(offerAmendment
            ? { proposed_execpolicy_amendment: amendment, amendment_unsandboxed: !denyRead }
            : {}),
          ...(additional && request.additionalPermissions
            ? { additional_permissions: request.additionalPermissions }
            : {}),
          ...(network ? { network_approval_context: network } : {}),
          available_decisions: availableDecisions({
            additionalPermissions: additional,
            amendment: offerAmendment,
            network: network !== null,
            automatic: reviewer === 'auto',
          }),
        };
        announce(approvalRequest);
        const decision = await requestApproval(chain, {
          request: approvalRequest,
          hookRequest: hookRequest(request, question.phase),
          hooks: question.hooks,
          reviewer,
          cacheKey: cacheKey(),
          signal,
        });
        if (decision.type === 'approved_execpolicy_amendment') await saveAmendment(decision.amendment);
      };

      // What approving now means for the sandbox: outside it at once, or after a denial without
      // another question (the retry gates skip asking once a command was approved), or never.
      const initialUnsandboxed = (): 'now' | 'after_denial' | 'never' => {
        if (firstSandbox === null) return 'now';
        const retry = decideRetry({ ...gates, alreadyApproved: true });
        return retry.retry && retry.sandbox === 'none' && !retry.ask ? 'after_denial' : 'never';
      };
      let alreadyApproved = false;
      if (requirement.type === 'needs_approval') {
        await ask({
          phase: 'initial',
          reason: requirement.reason ?? request.justification,
          policyReason: requirement.policyReason,
          unsandboxed: initialUnsandboxed(),
          hooks: strict ? 'skip' : 'allow_and_deny',
        });
        alreadyApproved = true;
      } else if (strict) {
        // Strict auto-review also reviews what policy would let through, without hooks.
        await ask({
          phase: 'initial',
          reason: request.justification,
          policyReason: 'strict automatic review: every command goes to the automatic reviewer',
          unsandboxed: initialUnsandboxed(),
          hooks: 'skip',
        });
        alreadyApproved = true;
      }

      return runAttempts({
        firstSandbox,
        attempt,
        callId: request.callId,
        ...(request.signal ? { signal: request.signal } : {}),
        gates: { ...gates, alreadyApproved },
        isDenial: (sandbox, evidence) => isSandboxDenial(sandbox.backend, evidence, platform),
        approveRetry: (retry) =>
          ask({
            phase: 'retry',
            reason: retry.reason,
            policyReason: retry.networkContext
              ? `the sandbox blocked network access to "${retry.networkContext.host}"`
              : `the sandbox blocked it${denialSummary(retry.denial)}`,
            unsandboxed: retry.sandbox === 'none' ? 'now' : 'never',
            hooks: strict ? 'skip' : 'deny_only',
            networkContext: retry.networkContext,
          }),
      });
    },
  };
}

function validate(request: OrchestratorRequest): void {
  if (request.argv.length === 0) throw new MissingCommandLineError();
  const issues: { path: string; message: string }[] = [];
  if (request.callId === '') issues.push({ path: 'callId', message: 'must not be empty' });
  if (!isAbsolutePath(request.cwd))
    issues.push({ path: 'cwd', message: `must be an absolute path, got "${request.cwd}"` });
  const additional = request.sandboxPermissions === 'with_additional_permissions';
  if (additional && !request.additionalPermissions) {
    issues.push({
      path: 'additional_permissions',
      message: 'is required with sandbox_permissions "with_additional_permissions"',
    });
  }
  if (!additional && request.additionalPermissions) {
    issues.push({
      path: 'additional_permissions',
      message: 'is only allowed with sandbox_permissions "with_additional_permissions"',
    });
  }
  if (issues.length > 0) throw new InvalidArgumentsError({ tool: 'exec_command', issues });
}

/** The command as typed: a shell invocation's script, else the quoted argv. */
function displayed(argv: readonly string[]): string {
  return shellInvocation(argv)?.script ?? shlexJoin(argv);
}

/** The last line the denied run printed, as a hint of what the sandbox refused. */
function denialSummary(denial: SandboxDeniedError): string {
  const last = denial.output.trimEnd().split('\n').pop()?.trim() ?? '';
  if (last === '') return ` (exit code ${denial.exitCode})`;
  return ` (${last.length > 160 ? `${last.slice(0, 160)}…` : last})`;
}

function hookRequest(request: OrchestratorRequest, phase: 'initial' | 'retry'): PermissionHookRequest {
  const invocation = shellInvocation(request.argv);
  return {
    tool: 'Bash',
    command: invocation ? invocation.script : shlexJoin(request.argv),
    argv: [...request.argv],
    cwd: request.cwd,
    ...(request.justification === undefined ? {} : { description: request.justification }),
    phase,
    call_id: request.callId,
  };
}
