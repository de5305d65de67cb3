import { spawn } from 'node:child_process';
import { executableName } from '../shell/shell-invocation.js';
import type { PermissionHook, PermissionHookDecision } from './permission-hook.js';

export interface CommandPermissionHookSettings {
  /** The program and its arguments, run directly (no shell): `['/usr/local/bin/check-command']`. */
  command: readonly string[];
  /** Names the hook in messages; defaults to the program's file name. */
  id?: string;
  /** How long the hook may take before it counts as a denial. Default 30 000 ms. */
  timeoutMs?: number;
  /** Variables added to the inherited environment. */
  env?: Readonly<Record<string, string>>;
  cwd?: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
// A hook answers with a short JSON object; anything near this size is a broken hook, not an answer.
const MAX_STDOUT_BYTES = 1024 * 1024;
const STDERR_TAIL_CHARS = 400;

/**
 * A permission hook that runs a user-configured command (trusted configuration: it is not sandboxed).
 * The command reads the request as one JSON object on stdin
 * (`{"tool":"Bash","command":"…","argv":[…],"cwd":"…","description":"…","phase":"initial","call_id":"…"}`)
 * and answers on stdout with `{"decision":"allow"}`, `{"decision":"deny","message":"…"}` or
 * `{"decision":"ask"}`; empty output means `ask`. A non-zero exit, malformed output, a timeout or a
 * failure to start is a `deny` whose message names the hook and the problem: hooks fail closed.
 */
export function createCommandPermissionHook(settings: CommandPermissionHookSettings): PermissionHook {
  if (settings.command.length === 0 || settings.command[0] === '') {
    throw new TypeError('a command permission hook needs a program to run');
  }
  const id = settings.id ?? executableName(settings.command[0]!);
  const timeoutMs = settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const deny = (problem: string): PermissionHookDecision => ({
    decision: 'deny',
    message: `permission hook "${id}" ${problem}; the command was not run`,
  });

  return {
    id,
    check(request, { signal }) {
      return new Promise((resolve) => {
        if (signal.aborted) {
          resolve(deny('was cancelled'));
          return;
        }
        const [program, ...args] = settings.command as [string, ...string[]];
        const child = spawn(program, args, {
          cwd: settings.cwd,
          env: { ...process.env, ...settings.env },
          stdio: ['pipe', 'pipe', 'pipe'],
          // Its own process group, so a timeout ends the hook and whatever it started.
          detached: true,
        });
        const stdout: Buffer[] = [];
        let stdoutBytes = 0;
        let stderr = '';
        let settled = false;
        const finish = (decision: PermissionHookDecision) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(decision);
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
          finish(deny(`did not answer within ${timeoutMs} ms`));
        }, timeoutMs);
        const onAbort = () => {
          kill();
          finish(deny('was cancelled'));
        };
        signal.addEventListener('abort', onAbort, { once: true });

        child.on('error', (error) => finish(deny(`could not start ${program}: ${error.message}`)));
        child.stdout.on('data', (chunk: Buffer) => {
          stdoutBytes += chunk.length;
          if (stdoutBytes > MAX_STDOUT_BYTES) {
            kill();
            finish(deny(`wrote more than ${MAX_STDOUT_BYTES} bytes instead of a JSON answer`));
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
            finish(deny(`${how}${detail}`));
            return;
          }
          finish(parseAnswer(Buffer.concat(stdout).toString('utf8'), deny));
        });
        // A hook that exits without reading stdin makes the write fail with EPIPE; its answer still counts.
        child.stdin.on('error', () => undefined);
        child.stdin.end(`${JSON.stringify(request)}\n`);
      });
    },
  };
}

function parseAnswer(
  text: string,
  deny: (problem: string) => PermissionHookDecision,
): PermissionHookDecision {
  const trimmed = text.trim();
  if (trimmed === '') return { decision: 'ask' };
  let answer: unknown;
  try {
    answer = JSON.parse(trimmed);
  } catch {
    return deny(`answered with malformed JSON: ${JSON.stringify(trimmed.slice(0, 200))}`);
  }
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) {
    return deny(`answered ${JSON.stringify(answer)}, expected an object such as {"decision":"allow"}`);
  }
  const { decision, message } = answer as { decision?: unknown; message?: unknown };
  if (message !== undefined && typeof message !== 'string') {
    return deny('answered with a "message" that is not a string');
  }
  switch (decision) {
    case 'allow':
      return { decision: 'allow' };
    case 'ask':
      return { decision: 'ask' };
    case 'deny':
      return message === undefined || message.trim() === ''
        ? { decision: 'deny' }
        : { decision: 'deny', message };
    default:
      return deny(`answered the decision ${JSON.stringify(decision)}; expected "allow", "deny" or "ask"`);
  }
}
