import { spawn } from 'node:child_process';

export interface RunStepOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** Every line of output, stdout and stderr interleaved as they come. */
  onLine?: (line: string) => void;
  signal?: AbortSignal;
  /** How many of the last lines to keep for error messages. */
  tailLines?: number;
}

export interface StepResult {
  /** The exit code; null when a signal ended the process. */
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines of output. */
  tail: string[];
  /** Set when the program could not be started at all (ENOENT: not installed). */
  spawnError?: NodeJS.ErrnoException;
  aborted: boolean;
}

/**
 * Runs one build step (tar, patch, configure, make…) in its own process group, streaming its output
 * line by line. An abort kills the whole group (make's compilers too), never just the leader. Resolves
 * in every case; the caller turns a failure into an error that says what to do.
 */
export function runStep(
  command: string,
  args: readonly string[],
  options: RunStepOptions,
): Promise<StepResult> {
  const keep = options.tailLines ?? 30;
  const tail: string[] = [];
  const take = (line: string) => {
    tail.push(line);
    if (tail.length > keep) tail.shift();
    options.onLine?.(line);
  };
  return new Promise((resolve) => {
    if (options.signal?.aborted) {
      resolve({ code: null, signal: null, tail, aborted: true });
      return;
    }
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let aborted = false;
    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (signal: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    const onAbort = () => {
      aborted = true;
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), 2000);
      killTimer.unref();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const splitter = (): ((chunk: Buffer) => void) & { flush(): void } => {
      let partial = '';
      const feed = (chunk: Buffer) => {
        const lines = (partial + chunk.toString('utf8')).split('\n');
        partial = lines.pop() ?? '';
        for (const line of lines) take(line);
      };
      return Object.assign(feed, {
        flush() {
          if (partial) take(partial);
          partial = '';
        },
      });
    };
    const out = splitter();
    const err = splitter();
    child.stdout.on('data', out);
    child.stderr.on('data', err);
    let spawnError: NodeJS.ErrnoException | undefined;
    child.on('error', (error: NodeJS.ErrnoException) => {
      spawnError = error;
    });
    child.on('close', (code, signal) => {
      out.flush();
      err.flush();
      options.signal?.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      // The leader is gone; anything it left in its group goes too (a compiler make started).
      if (aborted) killGroup('SIGKILL');
      resolve({ code, signal, tail, aborted, ...(spawnError ? { spawnError } : {}) });
    });
  });
}
