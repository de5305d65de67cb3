import type { CallTracker } from './call-tracker.js';
import type { DoorContext } from './door-context.js';
import { type CallContext, failed, type ToolResponse } from './tool-response.js';

/** A tool's handler: the door, the model's arguments, the call. */
export type ToolHandler = (door: DoorContext, args: unknown, context: CallContext) => Promise<ToolResponse>;

/**
 * A handler as the door offers it: refused after shutdown and while the zsh fork the flags asked for
 * cannot start, given a call id when the host gave none, tracked until it answers, and never
 * throwing (a bug is an `internal_error` result).
 */
export function guardedHandler(door: DoorContext, calls: CallTracker, handler: ToolHandler, name: string) {
  return async (args: unknown, context: CallContext): Promise<ToolResponse> => {
    // The wall time of every result counts from here (or from where the host received the call).
    const startedAt = context.startedAt ?? Date.now();
    const command = commandOf(args);
    if (door.isShutDown())
      return failed(startedAt, {
        code: 'session_shut_down',
        message: `${name} failed: the session has shut down`,
        ...command,
        nextStep: 'Nothing runs in this session any more: tell the person.',
      });
    // The flags asked for per-exec policy; running direct instead would drop it without a word.
    if (door.plan.zshForkUnavailable !== undefined)
      return failed(startedAt, {
        code: 'zsh_fork_unavailable',
        message: `${name} failed: the zsh fork cannot start: ${door.plan.zshForkUnavailable}`,
        ...command,
        nextStep: 'Nothing runs in this session until the zsh fork can start: tell the person.',
      });
    const callContext = {
      ...context,
      callId: context.callId || `call_${Math.random().toString(36).slice(2, 10)}`,
      startedAt,
    };
    return calls.track(
      handler(door, args, callContext).catch((error: unknown) =>
        // A bug, not a model mistake; still an answer, never a throw.
        failed(startedAt, {
          code: 'internal_error',
          message: `${name} failed: internal error: ${error instanceof Error ? error.message : String(error)}`,
          ...command,
        }),
      ),
    );
  };
}

/** The command of a call's arguments (`cmd`, or `command` of shell_command) when there is one, as given. */
function commandOf(args: unknown): { command?: string } {
  if (typeof args !== 'object' || args === null) return {};
  const { cmd, command } = args as { cmd?: unknown; command?: unknown };
  if (typeof cmd === 'string') return { command: cmd };
  if (typeof command === 'string') return { command };
  return {};
}
