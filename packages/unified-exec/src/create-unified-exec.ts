import { randomUUID } from 'node:crypto';
import type { ShellMode, ToolPlan } from '@ux/features';
import type { Orchestrator } from '@ux/orchestrator';
import type { EscalationBroker } from '@ux/protocol/core';
import {
  DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  isOp,
  type NetworkAccessEvent,
  type Op,
  type ShellEnvironmentPolicy,
  type ToolDefinition,
  UnknownProcessIdError,
  type UxEvent,
} from '@ux/protocol/core';
import type { ShellSnapshotCache } from '@ux/spawn';
import { createCallTracker } from './call-tracker.js';
import { checkedEnvironments } from './checked-environments.js';
import type { DoorContext, Entry, ProcessStarter } from './door-context.js';
import type { DoorEnvironment } from './door-environments.js';
import { createDoorEventStream } from './door-event-stream.js';
import { doorSnapshots } from './door-snapshots.js';
import { doorToolDefinitions } from './door-tools.js';
import { execCommand } from './exec-command.js';
import { execCommandEndEvent } from './exec-command-end-event.js';
import { guardedHandler } from './guarded-handler.js';
import { PauseState } from './pause-state.js';
import { type ProcessInfo, processInfo, waitingField } from './process-info.js';
import { ProcessStore } from './process-store.js';
import { shellCommand } from './shell-command.js';
import { type CallContext, failed, type ToolResponse } from './tool-response.js';
import { type SessionWatcher, watchSession } from './watch-session.js';
import { deliverChars, writeStdin } from './write-stdin.js';

export { LAST_OUTPUT_LINES, type ProcessInfo } from './process-info.js';
export type { SessionWatcher } from './watch-session.js';

export interface UnifiedExecOptions {
  /** Policy: approvals, sandbox choice, retries. */
  orchestrator: Orchestrator;
  /** Starts this machine's processes: `createLocalSpawner()` of `@ux/spawn`. */
  spawner: ProcessStarter;
  /**
   * Remote environments by id (not `local`): exec-servers commands can run on, chosen per call by
   * `environment_id`. Give the orchestrator each one's sandbox under the same id
   * (`createExecServerSandbox(spawner)` of `@ux/exec-server-client`).
   */
  environments?: Readonly<Record<string, DoorEnvironment>>;
  /** Where a call without `environment_id` runs; default `local` (or the only remote one without it). */
  defaultEnvironment?: string;
  /** Whether commands may run on this machine (requirements can forbid it); default true. */
  localEnvironment?: boolean;
  /** The feature plan (`planTools` of `@ux/features`): which tools exist and how commands launch. */
  toolPlan: ToolPlan;
  /** The session's working directory (absolute). */
  cwd: string;
  /** The user's shell for direct mode; default `$SHELL`, else `/bin/bash`. */
  userShell?: string;
  /** Config `allow_login_shell`; default true. */
  allowLoginShell?: boolean;
  /**
   * The shell environment policy (config `shell_environment_policy`): which host variables commands
   * start from; ux's pinned variables are added on top.
   */
  shellEnvironmentPolicy?: ShellEnvironmentPolicy;
  /** @deprecated Use `shellEnvironmentPolicy`; read only when it is absent. */
  environment?: ShellEnvironmentPolicy;
  /** The variables the shell environment policy filters; default `process.env`. */
  baseEnv?: Readonly<Record<string, string | undefined>>;
  /** @deprecated Use `baseEnv`; read only when it is absent. */
  baseEnvironment?: Readonly<Record<string, string | undefined>>;
  /** Exported to commands as `UX_THREAD_ID`. */
  threadId?: string;
  /** Session ids 1000, 1001, … instead of random ones (tests, reproducible transcripts). */
  deterministicIds?: boolean;
  /** Ceiling of an empty `write_stdin` poll; default 300000 ms, never below 5000. */
  maxBackgroundTerminalTimeoutMs?: number;
  /** The turn's output budget in tokens; `max_output_tokens` cannot exceed it. Default 10000. */
  toolOutputTokenLimit?: number;
  /** Warnings for the user (from the feature plan, for one). */
  onWarning?: (message: string) => void;
  /**
   * The escalation broker of `@ux/zsh-fork` (`startEscalationBroker`), needed when the plan runs local
   * commands through the zsh fork; the host owns its life (close it after `shutdown`).
   */
  escalationBroker?: EscalationBroker;
  /**
   * Where shell snapshots go (`toolPlan.shellSnapshot`); default a private directory under the system's
   * temporary directory. This session's files are removed at `shutdown`.
   */
  shellSnapshotDir?: string;
  /**
   * Shell snapshots kept across ux processes. Default: `shell-snapshot-cache` in ux's
   * per-user runtime root, which every sandbox hides; `false`: none (every session captures its own).
   */
  shellSnapshotCache?: ShellSnapshotCache | false;
  /** How long a shell snapshot may take before the session falls back to login commands; default 5000. */
  shellSnapshotTimeoutMs?: number;
  /**
   * Directories put first on every command's PATH, also after the login files ran (a login shell's
   * `/etc/profile` resets PATH): the CLI's `apply_patch` executable, say.
   */
  prependPath?: readonly string[];
  /**
   * Files and directories the `prependPath` helpers run (the CLI: Node and its own directory), shown
   * read-only inside every sandbox even where it hides their place (`SandboxPlanRequest.hostPaths`).
   */
  helperPaths?: readonly string[];
  /**
   * How long a new process may take to exit and still be judged a fast sandbox denial (retry,
   * escalation); default 150 ms. Raise it on a heavily loaded machine (a CI runner) where a denied
   * command can take longer than that to start and fail.
   */
  earlyExitWindowMs?: number;
  /**
   * Whether the reviewer can put a question to someone (false for an MCP client without elicitation):
   * a named denial then says to ask for escalation only when it can. A function is asked at each
   * result (a client may turn out to answer for itself). Default true.
   */
  reviewerCanAsk?: boolean | (() => boolean);
}

/** The door: the model-facing tools and the operations on their processes. */
export interface UnifiedExec {
  /** The tool definitions to give the model, per the feature plan. */
  readonly tools: ToolDefinition[];
  /** Dispatches a tool call by name. */
  call(name: string, args: unknown, context: CallContext): Promise<ToolResponse>;
  execCommand(args: unknown, context: CallContext): Promise<ToolResponse>;
  writeStdin(args: unknown, context: CallContext): Promise<ToolResponse>;
  shellCommand(args: unknown, context: CallContext): Promise<ToolResponse>;
  /** Subscribes to events; returns the unsubscribe function. */
  onEvent(listener: (event: UxEvent) => void): () => void;
  /**
   * Passes an event of a part the host composed beside the door (the network proxy's
   * `network_access`) to the door's listeners, so consumers read one stream.
   */
  notify(event: NetworkAccessEvent): void;
  /** Stops the yield clocks (while a client-side question is open) or restarts them. */
  setPaused(paused: boolean): void;
  /** Stops every call that is waiting; kills nothing. Emits `turn_aborted`. */
  interrupt(): void;
  /** Kills every stored process (their End events follow). */
  cleanBackgroundTerminals(): Promise<void>;
  /** Stops waiting, kills every process, waits for them to end; later calls are refused. */
  shutdown(): Promise<void>;
  /** Applies an op (`interrupt`, `clean_background_terminals`, `shutdown`); a malformed op is rejected. */
  handleOp(op: unknown): Promise<void>;
  /** The stored processes. */
  processes(): ProcessInfo[];
  /**
   * Whether stored session `sessionId` waits for input now (see `ProcessInfo.waitingForInput`);
   * undefined when it cannot be told or there is no such session.
   */
  waitingForInput(sessionId: number): boolean | undefined;
  /**
   * What the ZshFork command of call `callId` printed so far, while it runs, without taking it from
   * the model's next result: a terminal shows it before a per-exec question, so the question comes
   * after the script's earlier output. Undefined when the call has no such command running.
   */
  outputSoFar(callId: string): Uint8Array | undefined;
  /**
   * Watches one session's output from now on (a person attached from another terminal), not tied to
   * any call; returns the unsubscribe function, or undefined when no such session is stored. Watching
   * takes nothing away: the model's next poll still collects the same output.
   */
  watchSession(sessionId: number, watcher: SessionWatcher): (() => void) | undefined;
  /**
   * Delivers a person's keys to a session through `write_stdin`'s path, without collecting its output:
   * what the keys cause stays for the model's next poll. To a pipe session only Ctrl-C is delivered
   * (SIGINT). Throws `UnknownProcessIdError` (no such session) or `StdinClosedError` (`no_stdin`).
   */
  writeToSession(sessionId: number, chars: string): Promise<void>;
  /**
   * Ends one session's process (its process group, as `terminate` does); the session stays stored so
   * the model's next poll sees that it exited. Throws `UnknownProcessIdError` when there is none.
   */
  terminateSession(sessionId: number): Promise<void>;
}

/**
 * Composes orchestrator, spawner and feature plan into `exec_command` / `write_stdin` (and
 * `shell_command`). The parts it wires, each in a file of its own: the event stream
 * (`door-event-stream.ts`), the calls under way (`call-tracker.ts`), the process store
 * (`process-store.ts`), the handlers (`exec-command.ts`, `write-stdin.ts`, `shell-command.ts`) behind
 * one guard (`guarded-handler.ts`), the tool definitions (`door-tools.ts`) and the approval path
 * (the orchestrator asks; `approvalEvents` puts each question on the event stream).
 */
export function createUnifiedExec(options: UnifiedExecOptions): UnifiedExec {
  const environments = checkedEnvironments(options);
  const window = options.earlyExitWindowMs;
  if (window !== undefined && !(Number.isFinite(window) && window >= 0 && window <= 60_000))
    throw new RangeError(`earlyExitWindowMs must be a number of milliseconds from 0 to 60000, not ${window}`);
  // `environment_id` is offered exactly when a call has a choice.
  const plan: ToolPlan = {
    ...options.toolPlan,
    execCommandVariant: {
      ...options.toolPlan.execCommandVariant,
      environmentId: environments.count > 1,
    },
  };
  for (const warning of plan.warnings) options.onWarning?.(warning);

  const events = createDoorEventStream(options.onWarning);
  const calls = createCallTracker();
  const store = new ProcessStore<Entry>(options.deterministicIds ?? false);
  let shutDown = false;
  const stopApprovalEvents = approvalEvents(options.orchestrator, events.emit);
  const stopPolicyEvents = brokerPolicyFollower(options.orchestrator, options.escalationBroker);

  const interrupt = () => {
    calls.abortAll();
    events.emit({ type: 'turn_aborted', reason: 'interrupted' });
  };
  const cleanBackgroundTerminals = async () => {
    await Promise.all(store.drain().map((entry) => entry.launched.process.terminate()));
  };

  const door: DoorContext = {
    // DoorSettings
    sessionId: randomUUID(),
    plan,
    shellMode: plan.shell as ShellMode,
    cwd: options.cwd,
    userShell: options.userShell ?? process.env.SHELL ?? '/bin/bash',
    allowLoginShell: options.allowLoginShell ?? true,
    shellEnvironmentPolicy: options.shellEnvironmentPolicy ?? options.environment ?? {},
    baseEnv: options.baseEnv ?? options.baseEnvironment ?? process.env,
    threadId: options.threadId,
    maxBackgroundTerminalTimeoutMs:
      options.maxBackgroundTerminalTimeoutMs ?? DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS,
    toolOutputTokenLimit: options.toolOutputTokenLimit ?? DEFAULT_MAX_OUTPUT_TOKENS,
    prependPath: options.prependPath ?? [],
    helperPaths: options.helperPaths ?? [],
    earlyExitWindowMs: options.earlyExitWindowMs,
    // DoorPlaces
    environments: environments.remote,
    defaultEnvironment: environments.default,
    localEnvironment: environments.local,
    // DoorCollaborators
    orchestrator: options.orchestrator,
    spawner: options.spawner,
    escalationBroker: options.escalationBroker,
    snapshots: doorSnapshots(options, plan, events.emit),
    // DoorProcesses
    store,
    watchExit: (entry) => watchExit(entry, events.emit),
    interceptions: new Map(),
    // DoorCalls
    pause: new PauseState(),
    callSignal: calls.callSignal,
    abortTurn: interrupt,
    isShutDown: () => shutDown,
    // DoorEvents
    emit: events.emit,
    proxyRefusalsSince: events.proxyRefusalsSince,
    // DoorApprovals
    reviewerCanAsk: askable(options.reviewerCanAsk),
  };

  const handlers = {
    execCommand: guardedHandler(door, calls, execCommand, 'exec_command'),
    writeStdin: guardedHandler(door, calls, writeStdin, 'write_stdin'),
    shellCommand: guardedHandler(door, calls, shellCommand, 'shell_command'),
  };
  const tools = doorToolDefinitions(plan, environments);
  const offered = new Set(tools.map((tool) => tool.name));

  return {
    tools,
    ...handlers,
    async call(name, args, context) {
      if (!offered.has(name)) {
        return failed(context.startedAt ?? Date.now(), {
          code: 'unknown_tool',
          message: `unknown tool "${name}"; this session offers ${[...offered].join(', ') || 'no shell tools'}`,
          nextStep: `Call one of: ${[...offered].join(', ') || '(none)'}.`,
        });
      }
      if (name === 'exec_command') return handlers.execCommand(args, context);
      if (name === 'write_stdin') return handlers.writeStdin(args, context);
      return handlers.shellCommand(args, context);
    },
    onEvent: events.onEvent,
    notify: (event) => events.emit(event),
    setPaused: (paused) => door.pause.set(paused),
    interrupt,
    cleanBackgroundTerminals,
    async shutdown() {
      if (shutDown) return;
      shutDown = true;
      stopApprovalEvents();
      stopPolicyEvents?.();
      calls.abortAll();
      const entries = store.values();
      await cleanBackgroundTerminals();
      await calls.settled();
      // A call that was starting a process when the shutdown began stores it only now: end those too.
      const late = store.values();
      await cleanBackgroundTerminals();
      const ended = [...entries, ...late];
      await Promise.all(ended.map((entry) => entry.launched.process.closed));
      await Promise.all(ended.map((entry) => entry.launched.settled()));
      door.snapshots?.close();
    },
    async handleOp(raw) {
      if (!isOp(raw))
        throw new TypeError(
          `unknown op ${JSON.stringify(raw)}; expected interrupt, clean_background_terminals or shutdown`,
        );
      const op: Op = raw;
      if (op.type === 'interrupt') interrupt();
      else if (op.type === 'clean_background_terminals') await cleanBackgroundTerminals();
      else await this.shutdown();
    },
    processes: () => store.values().map(processInfo),
    watchSession(sessionId, watcher) {
      const entry = store.get(sessionId);
      return entry ? watchSession(entry, watcher) : undefined;
    },
    async writeToSession(sessionId, chars) {
      const entry = store.get(sessionId);
      if (!entry) throw new UnknownProcessIdError(sessionId);
      if (chars === '') return;
      await deliverChars(entry, chars);
      events.emit({
        type: 'terminal_interaction',
        call_id: entry.callId,
        process_id: String(sessionId),
        stdin: chars,
      });
    },
    async terminateSession(sessionId) {
      const entry = store.get(sessionId);
      if (!entry) throw new UnknownProcessIdError(sessionId);
      await entry.launched.process.terminate();
    },
    waitingForInput(sessionId) {
      const entry = store.get(sessionId);
      return entry ? waitingField(entry).waitingForInput : undefined;
    },
    outputSoFar: (callId) => door.interceptions?.get(callId)?.outputSoFar(),
  };
}

/** The approval path on the event stream: every question put to a reviewer, before anyone answers. */
function approvalEvents(orchestrator: Orchestrator, emit: (event: UxEvent) => void): () => void {
  return orchestrator.onApprovalRequest((request) => emit({ type: 'exec_approval_request', ...request }));
}

/**
 * ZshFork: a rule approved in this session may change what an exec gets; the broker forgets the Run
 * answers it was allowed to give by itself at once (before anything decides with the new rules).
 */
function brokerPolicyFollower(
  orchestrator: Orchestrator,
  broker: EscalationBroker | undefined,
): (() => void) | undefined {
  if (!broker || typeof orchestrator.onExecPolicyChange !== 'function') return undefined;
  return orchestrator.onExecPolicyChange(() => broker.invalidateCaches());
}

/** The End event of a stored process, once its output was read to the end. */
function watchExit(entry: Entry, emit: (event: UxEvent) => void): void {
  const { process } = entry.launched;
  void entry.stream.drained.then(() => {
    emit(
      execCommandEndEvent({
        callId: entry.callId,
        processId: entry.id,
        command: entry.command,
        cwd: entry.cwd,
        source: 'unified_exec_startup',
        exitCode: process.exitStatus()?.exitCode,
        stream: entry.stream,
        durationMs: Date.now() - entry.startedAt,
      }),
    );
  });
}

/** `reviewerCanAsk` as a question the door asks at each result. */
function askable(option: boolean | (() => boolean) | undefined): () => boolean {
  if (typeof option === 'function') return option;
  const value = option ?? true;
  return () => value;
}
