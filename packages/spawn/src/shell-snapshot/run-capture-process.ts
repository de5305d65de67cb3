import type { ExecProcess, ExitStatus, SpawnRequest } from '@ux/protocol/core';

export interface CaptureLaunch {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
}

export type CaptureWrap = (
  launch: CaptureLaunch,
) => Promise<CaptureLaunch & { cleanup?: () => Promise<void> }>;

export interface RunCaptureProcessOptions {
  launch: CaptureLaunch;
  spawner: { spawn(request: SpawnRequest): Promise<ExecProcess> };
  wrap?: CaptureWrap;
  /** `Date.now()` by which the process must have exited. */
  deadline: number;
  signal?: AbortSignal;
  /** Output (stdout and stderr together) beyond which the process is ended. */
  maxBytes: number;
  /**
   * A process that waits for the host halfway (the capture, then the load check in the same sandbox):
   * once `mark` has appeared on stdout, `act` runs with stdout so far and the environment the process
   * was given; it answers `stop` to end the process group, or a new deadline for the rest.
   */
  midway?: {
    mark: Buffer;
    act(stdout: Buffer, env: Record<string, string>): Promise<{ deadline: number } | 'stop'>;
  };
}

export type CaptureProcessResult =
  | {
      outcome: 'exited';
      status: ExitStatus;
      stdout: Buffer;
      stderr: Buffer;
      /** The environment the process was given, after `wrap`. */
      env: Record<string, string>;
    }
  | { outcome: 'timeout' | 'aborted' | 'too-large'; stdout: Buffer; stderr: Buffer }
  | { outcome: 'spawn-failed'; message: string };

/** How long, after the shell exited, its output may stay open (a background job holding the pipe). */
const CLOSE_GRACE_MS = 200;

/**
 * Runs one short-lived process with stdin closed, keeping stdout and stderr apart, and ends its whole
 * process group when it takes too long, is cancelled, prints too much, or leaves members behind after
 * the leader exited (a login file's `cmd &`): a capture never leaves a process running.
 */
export async function runCaptureProcess(options: RunCaptureProcessOptions): Promise<CaptureProcessResult> {
  const { spawner, signal, maxBytes } = options;
  if (signal?.aborted) return { outcome: 'aborted', stdout: Buffer.alloc(0), stderr: Buffer.alloc(0) };
  let launch: CaptureLaunch & { cleanup?: () => Promise<void> };
  try {
    launch = options.wrap ? await options.wrap(options.launch) : options.launch;
  } catch (error) {
    return { outcome: 'spawn-failed', message: `the sandbox could not wrap it: ${messageOf(error)}` };
  }
  try {
    let child: ExecProcess;
    try {
      child = await spawner.spawn({
        argv: launch.argv,
        cwd: launch.cwd,
        env: launch.env,
        tty: false,
        stdin: 'closed',
      });
    } catch (error) {
      return { outcome: 'spawn-failed', message: messageOf(error) };
    }
    const result = await collect(child, options.deadline, signal, maxBytes, options.midway, launch.env);
    return result.outcome === 'exited' ? { ...result, env: launch.env } : result;
  } finally {
    await launch.cleanup?.().catch(() => {});
  }
}

async function collect(
  child: ExecProcess,
  deadline: number,
  signal: AbortSignal | undefined,
  maxBytes: number,
  midway: RunCaptureProcessOptions['midway'],
  env: Record<string, string>,
): Promise<
  | { outcome: 'exited'; status: ExitStatus; stdout: Buffer; stderr: Buffer }
  | { outcome: 'timeout' | 'aborted' | 'too-large'; stdout: Buffer; stderr: Buffer }
> {
  const stdout: Buffer[] = [];
  const stderr: Buffer[] = [];
  let bytes = 0;
  let stop: ((why: 'timeout' | 'aborted' | 'too-large') => void) | undefined;
  const stopped = new Promise<'timeout' | 'aborted' | 'too-large'>((resolve) => {
    stop = resolve;
  });
  let midwayDone = false;
  let finished = false;
  let acting: Promise<void> = Promise.resolve();
  // The end of what came before the last chunk, so a mark split across two chunks is still seen.
  let tail = Buffer.alloc(0);
  const unsubscribe = child.onOutput((chunk, stream) => {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) {
      stop?.('too-large');
      return;
    }
    // Output kept for a late first listener comes without a stream name: count it as stdout.
    (stream === 'stderr' ? stderr : stdout).push(Buffer.from(chunk));
    if (midway && !midwayDone && stream !== 'stderr') {
      const window = Buffer.concat([tail, chunk]);
      if (!window.includes(midway.mark)) {
        tail = window.subarray(Math.max(0, window.length - midway.mark.length + 1));
        return;
      }
      midwayDone = true;
      acting = midway.act(Buffer.concat(stdout), env).then(
        (next) => {
          if (finished) return;
          if (next === 'stop') {
            void child.terminate();
            return;
          }
          clearTimeout(timer);
          timer = setTimeout(() => stop?.('timeout'), Math.max(0, next.deadline - Date.now()));
        },
        () => void child.terminate(),
      );
    }
  });
  let timer = setTimeout(() => stop?.('timeout'), Math.max(0, deadline - Date.now()));
  const onAbort = () => stop?.('aborted');
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const first = await Promise.race([child.exited, stopped]);
    if (typeof first === 'string') {
      await child.terminate();
      await settle(child.closed, 2_000);
      return { outcome: first, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr) };
    }
    // The shell is gone; what it left in its group (background jobs of a login file) goes too.
    const closedInTime = await settle(child.closed, CLOSE_GRACE_MS);
    // A no-op when the group is empty; otherwise its leftovers are ended (SIGTERM, then SIGKILL).
    await child.terminate();
    if (!closedInTime) await settle(child.closed, 1_000);
    return { outcome: 'exited', status: first, stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr) };
  } finally {
    // What the host does halfway is over before the result is: no file is written after it.
    await acting;
    finished = true;
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    unsubscribe();
  }
}

/** Whether `promise` settled within `ms`. */
async function settle(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
