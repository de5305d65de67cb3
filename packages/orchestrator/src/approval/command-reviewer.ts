import {
  REVIEWER_SPECIFICATION_VERSION,
  RejectedError,
  type ReviewDecision,
  type Reviewer,
} from '@ux/protocol/core';
import { executableName } from '../shell/shell-invocation.js';
import { parseJsonObject, runJsonCommand } from './run-json-command.js';

export interface CommandReviewerSettings {
  /** The program and its arguments, run directly (no shell): `['/usr/local/bin/review-command']`. */
  command: readonly string[];
  /** Names the reviewer in messages; defaults to the program's file name. */
  id?: string;
  /** How long it may take before the answer is `timed_out`. Default 60 000 ms. */
  timeoutMs?: number;
  /** Variables added to the inherited environment. */
  env?: Readonly<Record<string, string>>;
  cwd?: string;
}

const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * An automatic reviewer backed by a user-configured command (trusted configuration: not sandboxed), run
 * the way a command permission hook is (`createCommandPermissionHook`). It reads the `ApprovalRequest`
 * as one JSON object on stdin and answers on stdout with `{"decision":"allow"}` or
 * `{"decision":"deny","message":"…"}`; the message reaches the model (`rejected by the automatic
 * reviewer "<id>": <message>`). No answer in time is `timed_out` (like Codex's guardian timeout; see
 * docs/reference/orchestrator.md §6: not a judgement on the command); a cancelled review is `abort`. A non-zero exit, empty or malformed output,
 * or a failure to start is a refusal that says what went wrong: the reviewer fails closed.
 */
export function createCommandReviewer(settings: CommandReviewerSettings): Reviewer {
  if (settings.command.length === 0 || settings.command[0] === '') {
    throw new TypeError('a command reviewer needs a program to run');
  }
  const id = settings.id ?? executableName(settings.command[0]!);
  const timeoutMs = settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id,
    async review(request, { signal }): Promise<ReviewDecision> {
      const outcome = await runJsonCommand(
        {
          command: settings.command,
          timeoutMs,
          ...(settings.env ? { env: settings.env } : {}),
          ...(settings.cwd ? { cwd: settings.cwd } : {}),
        },
        request,
        signal,
      );
      if (signal.aborted) return { type: 'abort' };
      if (outcome.kind === 'timeout') return { type: 'timed_out' };
      if (outcome.kind === 'failed') throw new Error(`"${id}" ${outcome.problem}`);
      const parsed = parseJsonObject(outcome.stdout, '{"decision":"allow"}');
      if ('problem' in parsed) throw new Error(`"${id}" ${parsed.problem}`);
      const { decision, message } = parsed.object;
      if (message !== undefined && typeof message !== 'string')
        throw new Error(`"${id}" answered with a "message" that is not a string`);
      if (decision === 'allow') return { type: 'approved' };
      if (decision === 'deny') {
        if (message === undefined || message.trim() === '') return { type: 'denied' };
        throw new RejectedError({
          reason: `rejected by the automatic reviewer "${id}": ${message.trim()}`,
          source: 'reviewer',
        });
      }
      throw new Error(
        `"${id}" answered the decision ${JSON.stringify(decision)}; expected "allow" or "deny"`,
      );
    },
  };
}
