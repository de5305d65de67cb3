import type { ShellMode, ToolPlan } from '@ux/features';
import type { Orchestrator } from '@ux/orchestrator';
import type {
  EscalationBroker,
  ExecProcess,
  ExecResult,
  LaunchPlan,
  NetworkAccessEvent,
  ShellEnvironmentPolicy,
  UxEvent,
} from '@ux/protocol/core';
import type { LocalSpawnRequest, OutputTracker } from '@ux/spawn';
import type { DoorEnvironment } from './door-environments.js';
import type { ExecInterception } from './intercept-execs.js';
import type { OutputStream } from './output-stream.js';
import type { PauseState } from './pause-state.js';
import type { ProcessStore, StoredEntry } from './process-store.js';
import type { SandboxNotices } from './sandbox-notices.js';
import type { ShellSnapshots } from './shell-snapshots.js';

/** Starts this machine's processes: `createLocalSpawner()` of `@ux/spawn`. */
export interface ProcessStarter {
  spawn(request: LocalSpawnRequest): Promise<ExecProcess>;
}

/** A process the door started, with what watches it. */
export interface Launched {
  process: ExecProcess;
  tracker: OutputTracker;
  plan: LaunchPlan | undefined;
  /** The sandbox backend id, or `none`. */
  sandboxType: string;
  /**
   * The sandbox level it started under (backend, what it enforces, how strongly), for its begin event,
   * its result and its receipt; absent when it runs without a sandbox (`sandboxType` `none`).
   */
  level?: SandboxLevel;
  /** What the sandboxes of this command's attempts reported. */
  notices: SandboxNotices;
  /** Resolves once the process has ended and its sandbox cleaned up (bounded wait); never rejects. */
  settled(): Promise<void>;
}

/** The level a command started under, as results and events carry it (`ExecResult.sandbox`). */
export type SandboxLevel = NonNullable<ExecResult['sandbox']>;

/** A live process kept across calls. */
export interface Entry extends StoredEntry {
  callId: string;
  command: string[];
  cwd: string;
  /** The environment it runs in (`local`, or a remote environment's id). */
  environment: string;
  tty: boolean;
  launched: Launched;
  stream: OutputStream;
  startedAt: number;
  /** The tool whose call started it (denials in polls name what that tool can do next). */
  tool: 'exec_command' | 'shell_command';
  /** It runs in a remote environment. */
  remote: boolean;
}

/**
 * What the handlers share: the named parts below, one meaning each. A handler takes the whole context;
 * a reader looks a member up by the part it belongs to.
 */
export interface DoorContext
  extends DoorSettings,
    DoorPlaces,
    DoorCollaborators,
    DoorProcesses,
    DoorCalls,
    DoorEvents,
    DoorApprovals {}

/** What the host configured, fixed for the session. */
export interface DoorSettings {
  /** Names this door's shell snapshots on exec-servers (`shellSnapshot.scopeId`). */
  sessionId: string;
  /** The feature plan: which tools exist and how commands launch. */
  plan: ToolPlan;
  shellMode: ShellMode;
  /** The session's working directory. */
  cwd: string;
  userShell: string;
  allowLoginShell: boolean;
  /** Which host variables commands start from, and what they are filtered from. */
  shellEnvironmentPolicy: ShellEnvironmentPolicy;
  /** The variables the shell environment policy filters (the host's). */
  baseEnv: Readonly<Record<string, string | undefined>>;
  threadId: string | undefined;
  maxBackgroundTerminalTimeoutMs: number;
  toolOutputTokenLimit: number;
  /** Directories first on every command's PATH (the zsh fork's bin directory is added to these). */
  prependPath: readonly string[];
  /** What the prependPath helpers run: shown read-only inside every sandbox. */
  helperPaths: readonly string[];
  /** The early-exit window (default 150 ms). */
  earlyExitWindowMs: number | undefined;
}

/** Where commands may run. */
export interface DoorPlaces {
  /** The remote environments, by id. */
  environments: ReadonlyMap<string, DoorEnvironment>;
  /** Where a call without `environment_id` runs; undefined: nowhere (no tool call can run). */
  defaultEnvironment: string | undefined;
  /** Whether commands may run on this machine. */
  localEnvironment: boolean;
}

/** The parts the door composes: policy, the spawner and what launches through them. */
export interface DoorCollaborators {
  orchestrator: Orchestrator;
  spawner: ProcessStarter;
  /** The broker intercepted execs go through (ZshFork); required when `shellMode` is the zsh fork. */
  escalationBroker: EscalationBroker | undefined;
  /** Login commands source a snapshot instead of running the login files (`shell_snapshot`). */
  snapshots: ShellSnapshots | undefined;
}

/** The process store: live processes kept across calls, and what watches them. */
export interface DoorProcesses {
  store: ProcessStore<Entry>;
  /** Starts the End-event watcher of a stored process. */
  watchExit(entry: Entry): void;
  /** The ZshFork interceptions of commands still running, by call id (`UnifiedExec.outputSoFar`). */
  interceptions?: Map<string, ExecInterception>;
}

/** The calls under way: their signals, the yield clocks, the session's end. */
export interface DoorCalls {
  /** The yield clocks, stopped while a client-side question is open. */
  pause: PauseState;
  /** A signal for one call: aborted by the call's own signal or by `interrupt()`. */
  callSignal(signal: AbortSignal | undefined): { signal: AbortSignal; done(): void };
  /** Stops the turn: every waiting call returns (an abort at a per-exec prompt). Kills nothing. */
  abortTurn(): void;
  isShutDown(): boolean;
}

/** The event stream the door's listeners read. */
export interface DoorEvents {
  emit(event: UxEvent): void;
  /** The network proxy's refusals (`network_access` events) since `since` (`Date.now()`), oldest first. */
  proxyRefusalsSince(since: number): NetworkAccessEvent[];
}

/** The approval path, as the door's results see it (the orchestrator asks; the door words the results). */
export interface DoorApprovals {
  /** Someone can be asked for approval now (false: a client without elicitation): escalation is possible. */
  reviewerCanAsk: () => boolean;
}
