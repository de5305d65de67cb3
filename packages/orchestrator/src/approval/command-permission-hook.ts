import { executableName } from '../shell/shell-invocation.js';
import type { PermissionHook, PermissionHookDecision } from './permission-hook.js';
import { parseJsonObject, runJsonCommand } from './run-json-command.js';

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
    async check(request, { signal }) {
      const outcome = await runJsonCommand(
        { command: settings.command, timeoutMs, env: settings.env, cwd: settings.cwd },
        request,
        signal,
      );
      return outcome.kind === 'answer' ? parseAnswer(outcome.stdout, deny) : deny(outcome.problem);
    },
  };
}

function parseAnswer(
  text: string,
  deny: (problem: string) => PermissionHookDecision,
): PermissionHookDecision {
  const trimmed = text.trim();
  if (trimmed === '') return { decision: 'ask' };
  const parsed = parseJsonObject(trimmed, '{"decision":"allow"}');
  if ('problem' in parsed) return deny(parsed.problem);
  const answer = parsed.object;
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
