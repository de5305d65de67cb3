export const SPAWNER_SPECIFICATION_VERSION = 'ux-spawner-v1';

/**
 * How long `terminate()` waits between SIGTERM and SIGKILL: long enough for a program to remove its
 * lock files and flush, short enough that a program that ignores SIGTERM is gone well within 2 s.
 */
export const TERMINATE_GRACE_MS = 500;

export interface TerminalSize {
  rows: number;
  cols: number;
}

/** A command made ready to run: argv, cwd and the exact environment. */
export interface SpawnRequest {
  argv: readonly string[];
  /** Absolute working directory; it must exist. */
  cwd: string;
  /** The whole environment of the child; nothing else is inherited. */
  env: Readonly<Record<string, string>>;
  /** Give the child a PTY (stdin always open, output merged by the terminal). */
  tty: boolean;
  /** Without a PTY: keep a writable stdin pipe (`pipe`) or give the child no stdin (`closed`). */
  stdin: 'pipe' | 'closed';
  /** PTY size; 24×80 when omitted. */
  size?: TerminalSize;
  /** What the child sees as argv[0], when different from the program path. */
  arg0?: string;
}

/** Which pipe a chunk of output came from. */
export type OutputSource = 'stdout' | 'stderr';

/** How a process ended. A signal death is `128 + signal number` (SIGINT → 130, SIGKILL → 137). */
export interface ExitStatus {
  exitCode: number;
  /** Signal name when a signal ended it (`SIGKILL`). */
  signal?: string;
  /** Set when the host that ran the process classified its exit as a sandbox denial (remote hosts). */
  sandboxDenied?: boolean;
}

/**
 * A live process. Output is one byte stream (stdout and stderr merged in arrival order, or the PTY).
 * Bytes produced before the first `onOutput` listener is attached are kept and delivered to it.
 */
export interface ExecProcess {
  /** OS process id, when the process is local. */
  readonly pid: number | undefined;
  readonly tty: boolean;
  /**
   * Subscribes to output chunks; returns an unsubscribe function. Pipe processes may name the stream
   * each chunk came from (hosts such as an exec-server report them apart); output kept for a late first
   * listener, and PTY output, come without one.
   */
  onOutput(listener: (chunk: Uint8Array, stream?: OutputSource) => void): () => void;
  /** Writes to stdin. Rejects with `StdinClosedError` when there is no stdin or the process is gone. */
  write(data: Uint8Array | string): Promise<void>;
  /** SIGINT to the process group (Ctrl-C). Idempotent and safe after exit. */
  interrupt(): Promise<void>;
  /**
   * Ends the process: SIGTERM to the process group, then, after a short grace (`TERMINATE_GRACE_MS`),
   * SIGKILL to whatever of the group is left, a sandbox wrapper included. Resolves once SIGTERM was
   * sent; `exited` tells when it is over. Idempotent and safe after exit.
   */
  terminate(): Promise<void>;
  /**
   * Optional: stop reading the output until `resumeOutput()`. Once its pipe fills, the child blocks
   * writing, as it would behind a slow reader; hosts that forward output to a slower consumer (an
   * exec-server and its client) use this for back-pressure instead of buffering without bound.
   */
  pauseOutput?(): void;
  resumeOutput?(): void;
  /** Resizes the PTY; absent for pipe processes. */
  resize?(size: TerminalSize): void;
  /** Resolves once when the process has exited. Never rejects. */
  readonly exited: Promise<ExitStatus>;
  /** Resolves after exit when every output byte has been delivered to listeners. Never rejects. */
  readonly closed: Promise<void>;
  /** The exit status if the process has exited, without waiting. */
  exitStatus(): ExitStatus | undefined;
  /**
   * Optional: whether the process's foreground processes are blocked reading its terminal or its
   * stdin pipe right now ("waiting for input"); undefined when it cannot be told at the moment. Absent
   * where the host cannot tell at all (the local spawner has it on Linux only, from /proc; macOS,
   * Windows and remote processes do not). Cheap enough to ask a few times a second, not in a loop.
   */
  waitingForInput?(): boolean | undefined;
}

/**
 * Turns a command into a live process. Rejects with `MissingCommandLineError` (empty argv) or
 * `SpawnFailedError` (program or cwd missing, not executable), naming what failed.
 */
export interface Spawner {
  readonly specificationVersion: typeof SPAWNER_SPECIFICATION_VERSION;
  readonly id: string;
  spawn(request: SpawnRequest): Promise<ExecProcess>;
}
