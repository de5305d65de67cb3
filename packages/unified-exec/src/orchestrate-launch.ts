import { dirname, isAbsolute, resolve } from 'node:path';
import { ApprovalAbortedError, type OrchestratorOutcome, type OrchestratorRequest } from '@ux/orchestrator';
import { UxError } from '@ux/protocol/core';
import type { EscalationBroker } from '@ux/zsh-fork';
import { buildEnvironment } from './build-environment.js';
import { commandPreview } from './command-preview.js';
import type { DoorContext, Launched } from './door-context.js';
import { type ExecInterception, interceptExecs } from './intercept-execs.js';
import { launchAttempt } from './launch-attempt.js';
import { SandboxNotices } from './sandbox-notices.js';
import { type CallContext, failure, type ToolResponse } from './tool-response.js';

export type LaunchResult =
  | { outcome: OrchestratorOutcome<Launched>; interception: ExecInterception | undefined }
  | { failure: ToolResponse };

/**
 * One command through the orchestrator (approval, sandbox, retries) and the door's spawner: the one
 * path `exec_command` and `shell_command` share. A refusal or a failed start comes back as the
 * tool's failure text, never as a throw.
 */
export async function orchestrateLaunch(
  door: DoorContext,
  tool: 'exec_command' | 'shell_command',
  request: Omit<OrchestratorRequest, 'callId' | 'turnId'>,
  context: CallContext,
): Promise<LaunchResult> {
  const env = buildEnvironment(door.baseEnvironment, door.environment, door.threadId);
  const { argv, cwd, tty } = request;
  try {
    const notices = new SandboxNotices();
    const ids = { callId: context.callId, ...(context.turnId ? { turnId: context.turnId } : {}) };
    let interception: { broker: EscalationBroker; execs: ExecInterception } | undefined;
    const prepend = [...door.prependPath];
    if (door.shellMode.kind === 'zsh-fork') {
      // Never run the fork without its broker: the per-exec policy would silently be gone.
      if (!door.escalationBroker)
        throw new Error('the zsh fork needs an escalation broker, and this door was given none');
      // `zsh` by name is the fork too, so a nested `zsh -c` keeps intercepting.
      prepend.unshift(dirname(door.shellMode.zshPath));
    }
    if (prepend.length > 0) env.PATH = [...prepend, ...(env.PATH ? [env.PATH] : [])].join(':');
    if (door.shellMode.kind === 'zsh-fork' && door.escalationBroker) {
      interception = {
        broker: door.escalationBroker,
        execs: interceptExecs(door, request, ids, notices, env),
      };
    }
    // A login command sources the session's shell snapshot instead of running the login files; the
    // orchestrator and the events still see the command the model asked for.
    const launchArgv = withPathAfterLogin(
      door.snapshots ? await door.snapshots.launchArgv(argv, env, pathLine(prepend)) : [...argv],
      pathLine(prepend),
    );
    const outcome = await door.orchestrator.run(
      { ...ids, ...request },
      launchAttempt(
        door.spawner,
        { argv: launchArgv, cwd, env, tty, projectRoots: [door.cwd] },
        notices,
        interception,
      ),
    );
    // A rerun after a denial may have been approved before the first run: the receipt says it happened.
    if (outcome.status === 'completed' && outcome.escalated)
      notices.note(
        outcome.sandbox === null
          ? 'the sandbox blocked the first run; as approved, it ran again WITHOUT the sandbox'
          : 'the sandbox blocked the first run; it ran again in the same sandbox',
      );
    return { outcome, interception: interception?.execs };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      failure: failure(
        `${tool} failed for \`${commandPreview(argv)}\`: ${message}`,
        UxError.isInstance(error) ? error : undefined,
        ApprovalAbortedError.isInstance(error) ? { interruptTurn: true } : {},
      ),
    };
  }
}

/** The call's working directory: the session's, or `workdir` (absolute, or relative to the session's). */
export function resolveWorkdir(door: DoorContext, workdir: string | undefined): string {
  if (!workdir) return door.cwd;
  return isAbsolute(workdir) ? workdir : resolve(door.cwd, workdir);
}

/** `export PATH='a':'b':"$PATH"` for the directories that must stay first, or '' when there are none. */
function pathLine(dirs: readonly string[]): string {
  if (dirs.length === 0) return '';
  const quoted = dirs.map((dir) => `'${dir.replace(/'/g, `'\\''`)}'`).join(':');
  return `export PATH=${quoted}:"$PATH"\n`;
}

/** A plain login command: the login files may reset PATH, so the door's directories go first again. */
function withPathAfterLogin(argv: string[], line: string): string[] {
  if (line === '' || argv.length !== 3 || argv[1] !== '-lc') return argv;
  return [argv[0]!, '-lc', `${line}${argv[2]}`];
}
