import { spawn } from 'node:child_process';

/** A configured command that answers one JSON question (a permission hook, a command reviewer). */
export interface JsonCommandSettings {
  /** The program and its arguments, run directly (no shell). */
  command: readonly string[];
  timeoutMs: number;
  /** Variables added to the inherited environment. */
  env?: Readonly<Record<string, string>>;
  cwd?: string;
}

/** How the command ended: its answer (stdout of a zero exit), or the problem, worded for a message. */
export type JsonCommandOutcome =
  | { kind: 'answer'; stdout: string }
  | { kind: 'timeout'; problem: string }
  | { kind: 'failed'; problem: string };

// An answer is a short JSON object; anything near this size is a broken command, not an answer.
const MAX_STDOUT_BYTES = 1024 * 1024;
const STDERR_TAIL_CHARS = 400;

/**
 * Runs `settings.command` in its own process group (trusted configuration: not sandboxed), writes
 * `input` as one JSON line on its stdin and collects its stdout. A timeout, a cancellation, a failure
 * to start, a non-zero exit or an oversized answer ends the whole group and comes back as a problem;
 * it never throws.
 */
export function runJsonCommand(
  settings: JsonCommandSettings,
  input: unknown,
  signal: AbortSignal,
): Promise<JsonCommandOutcome> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve({ kind: 'failed', problem: 'was cancelled' });
      return;
    }
    const [program, ...args] = settings.command as [string, ...string[]];
    const child = spawn(program, args, {
      cwd: settings.cwd,
      env: { ...process.env, ...settings.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so a timeout ends the command and whatever it started.
      detached: true,
    });
    const stdout: Buffer[] = [];
    let stdoutBytes = 0;
    let stderr = '';
    let settled = false;
    const finish = (outcome: JsonCommandOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      resolve(outcome);
    };
    const kill = () => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      kill();
      finish({ kind: 'timeout', problem: `did not answer within ${settings.timeoutMs} ms` });
    }, settings.timeoutMs);
    const onAbort = () => {
      kill();
      finish({ kind: 'failed', problem: 'was cancelled' });
    };
    signal.addEventListener('abort', onAbort, { once: true });

    child.on('error', (error) =>
      finish({ kind: 'failed', problem: `could not start ${program}: ${error.message}` }),
    );
    child.stdout.on('data', (chunk: Buffer) => {
      stdoutBytes += chunk.length;
      if (stdoutBytes > MAX_STDOUT_BYTES) {
        kill();
        finish({
          kind: 'failed',
          problem: `wrote more than ${MAX_STDOUT_BYTES} bytes instead of a JSON answer`,
        });
      } else {
        stdout.push(chunk);
      }
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL_CHARS);
    });
    // `close` comes after both pipes are drained, so the answer is complete.
    child.on('close', (code, signalName) => {
      if (code !== 0) {
        const how = code === null ? `was killed by ${signalName}` : `exited with code ${code}`;
        const detail = stderr.trim() === '' ? '' : `: ${stderr.trim()}`;
        finish({ kind: 'failed', problem: `${how}${detail}` });
        return;
      }
      finish({ kind: 'answer', stdout: Buffer.concat(stdout).toString('utf8') });
    });
    // A command that exits without reading stdin makes the write fail with EPIPE; its answer still counts.
    child.stdin.on('error', () => undefined);
    child.stdin.end(`${JSON.stringify(input)}\n`);
  });
}

/** The answer parsed as a JSON object, or why it is not one. */
export function parseJsonObject(
  text: string,
  example: string,
): { object: Record<string, unknown> } | { problem: string } {
  const trimmed = text.trim();
  let answer: unknown;
  try {
    answer = JSON.parse(trimmed);
  } catch {
    return { problem: `answered with malformed JSON: ${JSON.stringify(trimmed.slice(0, 200))}` };
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    return { problem: `answered ${JSON.stringify(answer)}, expected an object such as ${example}` };
  }
  return { object: answer as Record<string, unknown> };
}
