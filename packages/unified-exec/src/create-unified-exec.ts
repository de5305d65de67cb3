import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { ShellMode, ToolPlan } from '@ux/features';
import type { Orchestrator } from '@ux/orchestrator';
import {
  DEFAULT_MAX_BACKGROUND_TERMINAL_TIMEOUT_MS,
  DEFAULT_MAX_OUTPUT_TOKENS,
  type EscalationBroker,
  execCommandToolDefinition,
  isOp,
  type NetworkAccessEvent,
  type Op,
  type ShellEnvironmentPolicy,
  shellCommandToolDefinition,
  type ToolDefinition,
  UnknownProcessIdError,
  UxError,
  type UxEvent,
  writeStdinToolDefinition,
} from '@ux/protocol/core';
import { ensureUxRuntimeRoot, excludedByShellEnvironmentPolicy } from '@ux/protocol-utils';
import { ShellSnapshotCache } from '@ux/spawn';
import type { DoorContext, Entry, ProcessStarter } from './door-context.js';
import type { DoorEnvironment } from './door-environments.js';
import { execCommand } from './exec-command.js';
import { execCommandEndEvent } from './exec-command-end-event.js';
import { PauseState } from './pause-state.js';
import { ProcessStore } from './process-store.js';
import { remoteEnvironmentPolicyProblem } from './remote-environment-policy-problem.js';
import { shellCommand } from './shell-command.js';
import { ShellSnapshots } from './shell-snapshots.js';
import { type CallContext, failed, type ToolResponse } from './tool-response.js';
import { deliverChars, writeStdin } from './write-stdin.js';

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

/** How long the door remembers the network proxy's refusals, to name the denials of the waits they fell in. */
const PROXY_REFUSAL_MEMORY_MS = 10 * 60_000;
const PROXY_REFUSAL_MEMORY_COUNT = 200;

export interface ProcessInfo {
  sessionId: number;
  command: string[];
  cwd: string;
  /** `local`, or the remote environment it runs in. */
  environment: string;
  tty: boolean;
  running: boolean;
  sandbox: string;
  /** The `exec_command` call that started it (its output deltas carry this id). */
  callId: string;
  /** When it started (ms since the epoch). */
  startedAt: number;
  /** When it last printed (ms since the epoch); absent: nothing yet. */
  lastOutputAt?: number;
  /** Its exit code once it has exited. */
  exitCode?: number;
  /** The last few lines of its latest output (at most `LAST_OUTPUT_LINES`), as printed. */
  lastLines: string[];
  /** The last of `lastLines` is not ended yet (no newline after it: a prompt, say). */
  lastLineOpen?: boolean;
  /** Its foreground process is blocked reading its terminal or stdin (when the platform can tell). */
  waitingForInput?: boolean;
}

/** How many of a session's last output lines `processes()` reports. */
export const LAST_OUTPUT_LINES = 5;

/** What `watchSession` reports about one session. */
export interface SessionWatcher {
  /** Output as it comes (whole characters), from the moment of the call on. */
  output(chunk: Uint8Array): void;
  /** The session's process ended and its output was read to the end. */
  exit(exitCode: number): void;
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

/** Composes orchestrator, spawner and feature plan into `exec_command` / `write_stdin` (and `shell_command`). */
export function createUnifiedExec(options: UnifiedExecOptions): UnifiedExec {
  const listeners = new Set<(event: UxEvent) => void>();
  const inFlight = new Set<AbortController>();
  const running = new Set<Promise<unknown>>();
  const store = new ProcessStore<Entry>(options.deterministicIds ?? false);
  const pause = new PauseState();
  let shutDown = false;
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

  // The proxy's refusals (the host passes its events to `notify`), kept a while with the time they
  // came: the receipt of a wait names a refusal that happened during it.
  const proxyRefusals: { at: number; event: NetworkAccessEvent }[] = [];
  const emit = (event: UxEvent) => {
    if (
      event.type === 'network_access' &&
      (event.decision === 'denied' || event.decision === 'asked_denied')
    ) {
      const now = Date.now();
      proxyRefusals.push({ at: now, event });
      while (
        proxyRefusals.length > PROXY_REFUSAL_MEMORY_COUNT ||
        (proxyRefusals[0] && proxyRefusals[0].at < now - PROXY_REFUSAL_MEMORY_MS)
      )
        proxyRefusals.shift();
    }
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        options.onWarning?.(`an event listener threw: ${(error as Error).message}`);
      }
    }
  };

  // Every question put to a reviewer is an event, before anyone answers (whole commands and execs).
  const stopApprovalEvents = options.orchestrator.onApprovalRequest((request) =>
    emit({ type: 'exec_approval_request', ...request }),
  );

  // ZshFork: a rule approved in this session may change what an exec gets; the broker forgets the
  // Run answers it was allowed to give by itself at once (before anything decides with the new rules).
  const broker = options.escalationBroker;
  const stopPolicyEvents =
    broker && typeof options.orchestrator.onExecPolicyChange === 'function'
      ? options.orchestrator.onExecPolicyChange(() => broker.invalidateCaches())
      : undefined;

  const door: DoorContext = {
    orchestrator: options.orchestrator,
    spawner: options.spawner,
    environments: environments.remote,
    defaultEnvironment: environments.default,
    localEnvironment: environments.local,
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
    store,
    pause,
    emit,
    callSignal(signal) {
      const controller = new AbortController();
      inFlight.add(controller);
      return {
        signal: signal ? AbortSignal.any([signal, controller.signal]) : controller.signal,
        done: () => inFlight.delete(controller),
      };
    },
    watchExit(entry) {
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
    },
    isShutDown: () => shutDown,
    abortTurn: () => interrupt(),
    interceptions: new Map(),
    escalationBroker: options.escalationBroker,
    prependPath: options.prependPath ?? [],
    helperPaths: options.helperPaths ?? [],
    earlyExitWindowMs: options.earlyExitWindowMs,
    reviewerCanAsk: askable(options.reviewerCanAsk),
    proxyRefusalsSince: (since) =>
      proxyRefusals.filter((entry) => entry.at >= since).map((entry) => entry.event),
    snapshots: plan.shellSnapshot
      ? new ShellSnapshots({
          dir:
            // ux's per-user runtime directory, which no sandbox can write: later commands source these.
            options.shellSnapshotDir ?? join(ensureUxRuntimeRoot(), 'shell-snapshots'),
          spawner: options.spawner,
          orchestrator: options.orchestrator,
          cwd: options.cwd,
          emit,
          ...(options.onWarning ? { onWarning: options.onWarning } : {}),
          ...(options.shellSnapshotTimeoutMs ? { timeoutMs: options.shellSnapshotTimeoutMs } : {}),
          excluded: excludedByShellEnvironmentPolicy(options.shellEnvironmentPolicy ?? options.environment),
          ...snapshotCacheOptions(
            options.shellSnapshotCache,
            options.shellEnvironmentPolicy ?? options.environment,
          ),
        })
      : undefined,
  };

  const guarded =
    (
      handler: (door: DoorContext, args: unknown, context: CallContext) => Promise<ToolResponse>,
      name: string,
    ) =>
    async (args: unknown, context: CallContext): Promise<ToolResponse> => {
      // The wall time of every result counts from here (or from where the host received the call).
      const startedAt = context.startedAt ?? Date.now();
      const command = commandOf(args);
      if (shutDown)
        return failed(startedAt, {
          code: 'session_shut_down',
          message: `${name} failed: the session has shut down`,
          ...command,
          nextStep: 'Nothing runs in this session any more: tell the person.',
        });
      // The flags asked for per-exec policy; running direct instead would drop it without a word.
      if (plan.zshForkUnavailable !== undefined)
        return failed(startedAt, {
          code: 'zsh_fork_unavailable',
          message: `${name} failed: the zsh fork cannot start: ${plan.zshForkUnavailable}`,
          ...command,
          nextStep: 'Nothing runs in this session until the zsh fork can start: tell the person.',
        });
      const callContext = {
        ...context,
        callId: context.callId || `call_${Math.random().toString(36).slice(2, 10)}`,
        startedAt,
      };
      const call = handler(door, args, callContext).catch((error: unknown) =>
        // A bug, not a model mistake; still an answer, never a throw.
        failed(startedAt, {
          code: 'internal_error',
          message: `${name} failed: internal error: ${error instanceof Error ? error.message : String(error)}`,
          ...command,
        }),
      );
      running.add(call);
      try {
        return await call;
      } finally {
        running.delete(call);
      }
    };

  const api = {
    execCommand: guarded(execCommand, 'exec_command'),
    writeStdin: guarded(writeStdin, 'write_stdin'),
    shellCommand: guarded(shellCommand, 'shell_command'),
  };

  const interrupt = () => {
    for (const controller of inFlight) controller.abort();
    inFlight.clear();
    emit({ type: 'turn_aborted', reason: 'interrupted' });
  };

  const cleanBackgroundTerminals = async () => {
    await Promise.all(store.drain().map((entry) => entry.launched.process.terminate()));
  };

  const tools: ToolDefinition[] = [];
  if (plan.tools.includes('exec_command')) {
    tools.push(
      execCommandToolDefinition({
        ...plan.execCommandVariant,
        platform: process.platform,
        environments: { ids: environments.ids, defaultId: environments.default },
      }),
      writeStdinToolDefinition(),
    );
  }
  if (plan.tools.includes('shell_command')) tools.push(shellCommandToolDefinition());
  const offered = new Set(tools.map((tool) => tool.name));

  return {
    tools,
    ...api,
    async call(name, args, context) {
      if (!offered.has(name)) {
        return failed(context.startedAt ?? Date.now(), {
          code: 'unknown_tool',
          message: `unknown tool "${name}"; this session offers ${[...offered].join(', ') || 'no shell tools'}`,
          nextStep: `Call one of: ${[...offered].join(', ') || '(none)'}.`,
        });
      }
      if (name === 'exec_command') return api.execCommand(args, context);
      if (name === 'write_stdin') return api.writeStdin(args, context);
      return api.shellCommand(args, context);
    },
    onEvent(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    notify: (event) => emit(event),
    setPaused: (paused) => pause.set(paused),
    interrupt,
    cleanBackgroundTerminals,
    async shutdown() {
      if (shutDown) return;
      shutDown = true;
      stopApprovalEvents();
      stopPolicyEvents?.();
      for (const controller of inFlight) controller.abort();
      const entries = store.values();
      await cleanBackgroundTerminals();
      await Promise.allSettled(running);
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
    processes() {
      return store.values().map((entry) => {
        const status = entry.launched.process.exitStatus();
        const lastOutputAt = entry.stream.lastOutputAt;
        return {
          sessionId: entry.id,
          command: entry.command,
          cwd: entry.cwd,
          environment: entry.environment,
          tty: entry.tty,
          running: status === undefined,
          sandbox: entry.launched.sandboxType,
          callId: entry.callId,
          startedAt: entry.startedAt,
          ...(lastOutputAt === undefined ? {} : { lastOutputAt }),
          ...(status === undefined ? {} : { exitCode: status.exitCode }),
          lastLines: entry.stream.lastLines(LAST_OUTPUT_LINES),
          ...(entry.stream.lastLineOpen ? { lastLineOpen: true } : {}),
          ...waitingField(entry),
        };
      });
    },
    watchSession(sessionId, watcher) {
      const entry = store.get(sessionId);
      if (!entry) return undefined;
      let active = true;
      const stop = entry.stream.watch((chunk) => {
        if (active) watcher.output(chunk);
      });
      void entry.stream.drained.then(() => {
        if (!active) return;
        active = false;
        stop();
        watcher.exit(entry.launched.process.exitStatus()?.exitCode ?? -1);
      });
      return () => {
        active = false;
        stop();
      };
    },
    async writeToSession(sessionId, chars) {
      const entry = store.get(sessionId);
      if (!entry) throw new UnknownProcessIdError(sessionId);
      if (chars === '') return;
      await deliverChars(entry, chars);
      emit({
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

/** `waitingForInput` of a stored process, when its spawner can tell (false once it has exited). */
function waitingField(entry: Entry): { waitingForInput?: boolean } {
  const { process } = entry.launched;
  if (typeof process.waitingForInput !== 'function') return {};
  if (entry.hasExited()) return { waitingForInput: false };
  const waiting = process.waitingForInput();
  return waiting === undefined ? {} : { waitingForInput: waiting };
}

/** The door's environments, checked once: a mistake here is the host's, and is thrown at creation. */
function checkedEnvironments(options: UnifiedExecOptions): {
  remote: ReadonlyMap<string, DoorEnvironment>;
  local: boolean;
  default: string | undefined;
  ids: string[];
  count: number;
} {
  const remote = new Map(Object.entries(options.environments ?? {}));
  const local = options.localEnvironment ?? true;
  if (remote.has('local'))
    throw new TypeError('"local" is this machine; a remote environment needs another id');
  for (const [id, environment] of remote) {
    if (typeof environment?.spawner?.spawn !== 'function')
      throw new TypeError(`environment "${id}" needs a spawner (createExecServerSpawner)`);
    if (environment.cwd !== undefined && !environment.cwd.startsWith('/'))
      throw new TypeError(`environment "${id}": cwd must be an absolute path, got "${environment.cwd}"`);
  }
  const ids = [...(local ? ['local'] : []), ...remote.keys()];
  const chosen =
    options.defaultEnvironment ?? (local ? 'local' : remote.size === 1 ? [...remote.keys()][0] : undefined);
  if (chosen !== undefined && !ids.includes(chosen))
    throw new TypeError(
      `default environment "${chosen}" is not one of this door's: ${ids.join(', ') || '(none)'}`,
    );
  // The same decision as ux's (`sessionEffectivePolicy` of `@ux/config`): what a remote server cannot apply is refused
  // before anything runs, not dropped.
  const problem =
    chosen !== undefined && remote.has(chosen)
      ? remoteEnvironmentPolicyProblem(options.orchestrator.policy, chosen)
      : undefined;
  if (problem) throw new UxError('invalid_arguments', problem);
  return { remote, local, default: chosen, ids, count: ids.length };
}

/** The command of a call's arguments (`cmd`, or `command` of shell_command) when there is one, as given. */
function commandOf(args: unknown): { command?: string } {
  if (typeof args !== 'object' || args === null) return {};
  const { cmd, command } = args as { cmd?: unknown; command?: unknown };
  if (typeof cmd === 'string') return { command: cmd };
  if (typeof command === 'string') return { command };
  return {};
}

/** `reviewerCanAsk` as a question the door asks at each result. */
function askable(option: boolean | (() => boolean) | undefined): () => boolean {
  if (typeof option === 'function') return option;
  const value = option ?? true;
  return () => value;
}

/** The door's cross-process snapshot cache: the given one, none, or the runtime root's (none when unsafe). */
function snapshotCacheOptions(
  given: ShellSnapshotCache | false | undefined,
  environment: ShellEnvironmentPolicy | undefined,
): { cache?: ShellSnapshotCache; cacheContext?: string } {
  if (given === false) return {};
  let cache = given;
  if (!cache) {
    try {
      cache = new ShellSnapshotCache({ dir: join(ensureUxRuntimeRoot(), 'shell-snapshot-cache') });
    } catch {
      // An unsafe runtime root: sandboxed commands say so; snapshots are then per session.
      return {};
    }
  }
  return { cache, cacheContext: JSON.stringify(environment ?? null) };
}
