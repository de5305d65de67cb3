// The contract between the door and the ZshFork escalation broker: what the patched zsh's execve
// wrapper reports for each exec, the answers the door gives, and the broker the door is handed.
// `@ux/zsh-fork` implements `EscalationBroker` (`startEscalationBroker`); the door (`@ux/unified-exec`)
// depends on these types only, so it does not install the native build it does not run.

/** The broker-side value for the spawn helper's `escalation` field (`@ux/spawn`'s `LocalSpawnRequest`). */
export interface SpawnEscalation {
  /** The broker's Unix socket (`EscalationBroker.socketPath`). */
  socketPath: string;
  /** A token the broker was told about for this one command; it is used up by the handshake. */
  token: string;
  /** Where the command finds its end of the socket; `ESCALATION_FD` of `@ux/spawn` unless there is a reason. */
  fd: number;
}

/** The version of the escalation broker interface; a breaking change adds a v2 beside it. */
export const ESCALATION_BROKER_SPECIFICATION_VERSION = 'ux-escalation-broker-v1';

/**
 * One exec the patched zsh was about to make, as its execve wrapper reported it. Strings are the
 * bytes the wrapper saw: valid UTF-8 as text, any other byte as a lone surrogate U+DC80–U+DCFF
 * (Python's "surrogateescape"), which the broker turns back into the same byte if the string is
 * handed back (in an escalation's argv or env).
 */
export interface InterceptedExec {
  /** The path zsh resolved and was about to execute (absolute when zsh found it on PATH). */
  file: string;
  /** The argv it would have run, argv[0] included. */
  argv: string[];
  /** The wrapper's working directory. */
  workdir: string;
  /** The environment the program would get, without `EXEC_WRAPPER` and `UX_ESCALATE_SOCKET`. */
  env: Record<string, string>;
}

/** What the handler knows about the exec besides its content. */
export interface ExecContext {
  /** The session (one command) it came from. */
  sessionId: string;
  /** The broker's number for this exec, unique per broker. */
  request: number;
  /**
   * Aborted when the answer no longer matters: the wrapper went away (its command was killed), the
   * session was closed or the broker ended. A handler waiting on an approval should stop waiting.
   */
  signal: AbortSignal;
}

/** Run the program in place, inside whatever sandbox the command is in. */
export interface RunAction {
  action: 'run';
  /**
   * The answer cannot differ for the same exec of this session: the decision read nothing but
   * `file`, `argv` and `workdir` and what stays fixed for the session (its settings, the sandbox it
   * runs in, the rules as they are now). The broker then answers Run itself when exactly the same
   * exec (same bytes of `file`, `argv`, `workdir`) comes again in this session, until
   * `invalidateCaches()` (a rule changed). Never set it for an answer that depends on an approval,
   * on files (their contents, times, owners) or on the environment.
   */
  cache?: boolean;
}

/** Refuse it: the wrapper prints `Execution denied: <reason>` and exits 1. */
export interface DenyAction {
  action: 'deny';
  reason: string;
}

/** A directory's `st_dev` and `st_ino`, as decimal strings (`statSync(path, { bigint: true })`). */
export interface DirectoryIdentity {
  dev: string;
  ino: string;
}

/**
 * Run it outside the command's sandbox, on the wrapper's stdio: the broker executes `argv[0]` (a path)
 * with exactly `argv`, `cwd` and `env` (no PATH lookup, nothing added). `argv` may be a sandbox
 * launcher's argv (a narrower sandbox for this one exec).
 */
export interface EscalateAction {
  action: 'escalate';
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  /**
   * The directory the decision checked at `cwd`, and each one above it up to `/` (`ancestors`, the
   * parent first; empty for `/`). The broker opens `cwd`, compares the directory and, through `..`,
   * each one above with these, and starts the program in that very directory (`fchdir`); when one
   * differs (the sandbox swapped, renamed or moved something since the check) the program does not run:
   * the command gets `ux: the working directory changed after it was checked; not run outside the
   * sandbox` on its stderr and 126, and `onCwdChanged` is called. Without it, `cwd` is entered as found.
   */
  cwdIdentity?: DirectoryIdentity & { ancestors: readonly DirectoryIdentity[] };
  /** The escalated child started (its pid leads a process group of its own). */
  onStart?(pid: number): void;
  /**
   * It ended: `code` is 128+signal when `signal` ended it. Also called (126 or 127) when the broker
   * could not start it (the directory could not be entered or changed, the fork failed); not called
   * when the escalation was cancelled before that.
   */
  onExit?(code: number, signal: NodeJS.Signals | null): void;
  /** The broker refused to start it: the directory at `cwd` was not the one `cwdIdentity` names. */
  onCwdChanged?(): void;
  /**
   * Called once, when the broker no longer needs what the decision holds for this escalation (the
   * child started, or it will never start: refused, cancelled, its session or the broker closed, or the
   * action could not be sent). A decision that keeps the checked directory open releases it here.
   */
  onSettled?(): void;
}

export type ExecAction = RunAction | DenyAction | EscalateAction;

/**
 * Decides one intercepted exec. The broker decides nothing itself: every exec waits for this answer,
 * except a repeat of an exec this handler answered Run with `cache: true` in the same session.
 * A handler that throws, or answers something that is not an `ExecAction`, denies the exec.
 */
export type ExecHandler = (exec: InterceptedExec, context: ExecContext) => ExecAction | Promise<ExecAction>;

/** Environment a ZshFork command needs on top of its own, next to `spawnEscalation`. */
export interface EscalationEnv {
  EXEC_WRAPPER: string;
  UX_ESCALATE_SOCKET: string;
}

/** One command's connection to the broker. */
export interface EscalationSession {
  readonly id: string;
  /** Single-use: the spawn helper's handshake uses it up. */
  readonly token: string;
  /** The value for `@ux/spawn`'s `escalation` spawn request field. */
  readonly spawnEscalation: SpawnEscalation;
  /** Variables to add to the command's environment. */
  readonly env: EscalationEnv;
  /**
   * How many of its execs the broker answered Run by itself (a repeat of one the handler answered Run
   * with `cache: true`); known once `close()` resolved, 0 before.
   */
  readonly cachedRuns: number;
  /**
   * Ends the session: its socket closes (later execs of the command fail closed), pending decisions
   * are aborted, escalated children get SIGTERM, then SIGKILL after 500 ms. Resolves once they are gone.
   */
  close(): Promise<void>;
}

/**
 * The Node side of one escalation broker: a process outside any sandbox that receives each exec a
 * ZshFork command's wrapper intercepts and asks the handler of the command's session what to do.
 */
export interface EscalationBroker {
  readonly specificationVersion: typeof ESCALATION_BROKER_SPECIFICATION_VERSION;
  /** Which implementation: `zsh-fork` for `@ux/zsh-fork`'s `ux-escalate-broker`. */
  readonly id: string;
  readonly socketPath: string;
  readonly wrapperPath: string;
  /** The sidecar's pid. */
  readonly pid: number;
  /**
   * Registers a session whose execs go to `handler`. Resolves once the broker knows its token, so the
   * command can be spawned right away.
   */
  openSession(handler: ExecHandler): Promise<EscalationSession>;
  /**
   * Forgets every session's cached Run answers: call it whenever anything a cacheable decision read
   * changes (a rule added or changed). Synchronous on the Node side: a decision that started before
   * it and answers after it is not cached, and the broker reads this before any later reply.
   */
  invalidateCaches(): void;
  /** Ends every session and escalated child, stops the sidecar and removes its directory. */
  close(): Promise<void>;
}
