import { randomUUID } from 'node:crypto';
import {
  type ApprovalPolicy,
  type ApprovalRequest,
  type EffectivePolicy,
  effectivePolicyFromSandboxPolicy,
  type Reviewer,
  type SandboxBackend,
  type SandboxPolicy,
} from '@ux/protocol/core';
import type { SandboxRegistry } from '@ux/protocol-utils';
import { absentReviewer } from '../approval/absent-reviewer.js';
import { type ApprovalStore, createApprovalStore } from '../approval/approval-store.js';
import type { PermissionHook } from '../approval/permission-hook.js';
import type { ApprovalRequirement } from '../policy/approval-requirement.js';
import { createExecPolicy, type ExecPolicy } from '../policy/exec-policy.js';
import type { RuleWriter } from '../policy/rule-file-appender.js';
import { createSandboxSelector, type SandboxSelector } from '../sandbox/sandbox-selector.js';
import { type BashParser, loadBashParser } from '../shell/bash-parser.js';
import { createApprovalAnnouncer } from './approval-announcer.js';
import type { Attempt, OrchestratorOutcome } from './attempt.js';
import { bashParserFor } from './bash-parser-for.js';
import { checkOrchestratorSettings } from './check-orchestrator-settings.js';
import { decideExec, type ExecDecision, type ExecDecisionRequest } from './decide-exec.js';
import { decideNetwork, type NetworkDecision, type NetworkDecisionRequest } from './decide-network.js';
import { decidePatch, type PatchDecision, type PatchDecisionRequest } from './decide-patch.js';
import { createEnvironmentSandboxPicker } from './environment-sandbox-picker.js';
import type { OrchestratorRequest } from './orchestrator-request.js';
import { reviewRoute } from './review-route.js';
import { checkedRequirement, type OrchestratorSession, runCommand } from './run-command.js';
import { preciseNowMs } from './session-changes.js';
import { createSessionExecPolicy } from './session-exec-policy.js';

export type { OrchestratorRequest } from './orchestrator-request.js';

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
   * The sandbox of each remote execution environment, by environment id: the backend that carries the
   * policy to the exec-server there (`createExecServerSandbox` of `@ux/exec-server-client`). A request
   * for one of them is sandboxed by that backend only, never by a local one; the registry, enabled
   * and allowed backends are this machine's. Its probe runs for every sandboxed request (it is a live
   * connection: an environment down now may be back later), and a failed probe fails closed.
   */
  environmentSandboxes?: Readonly<Record<string, SandboxBackend>>;
  /** @deprecated Use `environmentSandboxes`; read only when `environmentSandboxes` is absent. */
  environments?: Readonly<Record<string, SandboxBackend>>;
  /**
   * When the session started (ms since the epoch, host clock, may be fractional); default: when the
   * orchestrator was created, to the microsecond. A file whose `ctime` is at or after it was created or changed during the session, by the
   * sandbox or anyone else, and is not trusted outside the sandbox (an intercepted program, the
   * configuration of its working directory: docs/zsh-fork.md).
   */
  sessionStartMs?: number;
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
  /** The sandbox policy commands run under (in every execution environment), for describing and naming denials. */
  readonly policy: EffectivePolicy;
  /** The approval policy: whether a call can ask for more than the sandbox gives (`on-request`). */
  readonly approvalPolicy: ApprovalPolicy;
  readonly sandboxes: SandboxSelector;
}

/**
 * Policy in one place: exec-policy rules and command safety, the approval requirement and cache, the
 * reviewer chain, sandbox selection, the deny heuristic and the retry gates. It never spawns: the
 * caller's `attempt` does, so PTY, pipe and remote runs share every decision. Each part is a named
 * function of this folder; this factory only puts the session's parts together.
 */
export function createOrchestrator(settings: OrchestratorSettings): Orchestrator {
  checkOrchestratorSettings(settings);
  const sessionStartMs = settings.sessionStartMs ?? preciseNowMs();
  const platform = settings.platform ?? process.platform;
  const policy =
    'type' in settings.policy ? effectivePolicyFromSandboxPolicy(settings.policy) : settings.policy;
  const { approvalPolicy } = settings;
  const sandboxes = createSandboxSelector({
    sandboxRegistry: settings.sandboxRegistry,
    platform,
    ...(settings.enabledBackends ? { enabledBackends: settings.enabledBackends } : {}),
    ...(settings.allowedBackends ? { allowedBackends: settings.allowedBackends } : {}),
  });
  const chain = {
    hooks: settings.permissionHooks ?? [],
    ...(settings.autoReviewer ? { autoReviewer: settings.autoReviewer } : {}),
    user: settings.reviewer ?? absentReviewer(),
    store: settings.approvalStore ?? createApprovalStore(),
  };
  const execPolicy = createSessionExecPolicy({
    initial: settings.execPolicy ?? createExecPolicy(),
    ...(settings.ruleWriter ? { ruleWriter: settings.ruleWriter } : {}),
    ...(settings.onWarning ? { onWarning: settings.onWarning } : {}),
  });
  const announcer = createApprovalAnnouncer(settings.onWarning);
  const session: OrchestratorSession = {
    approvalPolicy,
    policy,
    platform,
    chain,
    autoReviewer: settings.autoReviewer,
    strictAutoReview: settings.strictAutoReview ?? false,
    escalateOnFailure: settings.escalateOnFailure ?? true,
    managedNetwork: settings.managedNetwork ?? false,
    execPolicy,
    announcer,
    sandboxPicker: createEnvironmentSandboxPicker({
      local: sandboxes,
      environmentSandboxes: settings.environmentSandboxes ?? settings.environments ?? {},
    }),
    bashParserFor: bashParserFor({
      ...(settings.bashParser ? { bashParser: settings.bashParser } : {}),
      loadBashParser: settings.loadBashParser ?? loadBashParser,
    }),
  };
  // Intercepted execs, patches and network questions: strict by default sends them to the reviewer too.
  const reviewer = reviewRoute({
    strictAutoReview: session.strictAutoReview,
    autoReviewer: settings.autoReviewer,
    approvalPolicy,
  });
  const newApprovalId = settings.newApprovalId ?? randomUUID;
  const { announce } = announcer;

  return {
    get execPolicy() {
      return execPolicy.current();
    },
    policy,
    approvalPolicy,
    sandboxes,
    run: (request, attempt) => runCommand(session, request, attempt),
    requirement: (request) => checkedRequirement(session, request),
    decideExec: (request) =>
      decideExec(
        {
          approvalPolicy,
          policy,
          execPolicy: execPolicy.current,
          bash: session.bashParserFor,
          platform,
          chain,
          sandboxes,
          newApprovalId,
          reviewer,
          onApprovalRequest: announce,
          sessionStartMs,
        },
        request,
      ),
    decidePatch: (request) =>
      decidePatch({ approvalPolicy, policy, chain, reviewer, newApprovalId, announce }, request),
    decideNetwork: (request) =>
      decideNetwork({ approvalPolicy, chain, reviewer, newApprovalId, announce }, request),
    onApprovalRequest: announcer.subscribe,
    onExecPolicyChange: execPolicy.onChange,
  };
}
