import { dirname } from 'node:path';
import type { OrchestratorOutcome, OrchestratorRequest } from '@ux/orchestrator';
import type { EscalationBroker } from '@ux/protocol/core';
import { encodeEnvPolicy, prependPathLine } from '@ux/protocol-utils';
import { snapshotShellKind } from '@ux/spawn';
import { buildEnvironment } from './build-environment.js';
import type { DoorContext, Launched } from './door-context.js';
import type { ResolvedEnvironment } from './door-environments.js';
import { type ExecInterception, interceptExecs } from './intercept-execs.js';
import { launchAttempt } from './launch-attempt.js';
import { launchFailureResponse } from './refusal-response.js';
import { SandboxNotices } from './sandbox-notices.js';
import type { CallContext, ToolResponse } from './tool-response.js';

export type LaunchResult =
  | { outcome: OrchestratorOutcome<Launched>; interception: ExecInterception | undefined }
  | { failure: ToolResponse };

/**
 * One command through the orchestrator (approval, sandbox, retries) and the door's spawner: the one
 * path `exec_command` and `shell_command` share. A refusal or a failed start comes back as a refused
 * or failed result quoting the command as the call gave it, never as a throw.
 */
export async function orchestrateLaunch(
  door: DoorContext,
  environment: ResolvedEnvironment,
  request: Omit<OrchestratorRequest, 'callId' | 'turnId' | 'environmentId' | 'environment'>,
  context: CallContext & { startedAt: number },
  /** The command as the call gave it: refusals quote it. */
  command: string,
): Promise<LaunchResult> {
  if (environment.remote) return orchestrateRemote(door, environment, request, context, command);
  const env = buildEnvironment(door.baseEnv, door.shellEnvironmentPolicy, door.threadId);
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
      door.snapshots ? await door.snapshots.launchArgv(argv, env, prependPathLine(prepend)) : [...argv],
      prependPathLine(prepend),
    );
    const outcome = await door.orchestrator.run(
      { ...ids, ...request },
      launchAttempt(
        door.spawner,
        {
          argv: launchArgv,
          cwd,
          env,
          tty,
          projectRoots: [door.cwd],
          // The shell, the snapshot it sources and ux's PATH directories stay readable inside even
          // where the sandbox hides their place (a private /tmp holding UX_HOME, say).
          hostPaths: [
            ...(launchArgv[0]?.startsWith('/') ? [launchArgv[0]] : []),
            ...prepend,
            ...door.helperPaths,
            ...(door.snapshots?.files ?? []),
          ],
        },
        notices,
        interception,
        door.earlyExitWindowMs,
      ),
    );
    noteRerun(outcome, notices);
    return { outcome, interception: interception?.execs };
  } catch (error) {
    return { failure: launchFailureResponse(context.startedAt, command, error) };
  }
}

/**
 * A command for a remote environment: the same orchestrator, told where it runs (so its sandbox is
 * that environment's and an approval covers that environment only), started by the environment's
 * spawner. Always direct: no zsh fork, no local PATH entries; the server builds the variables from
 * its own with the policy and puts ux's pinned ones on top; a login command may run from the
 * server's own snapshot of the shell.
 */
async function orchestrateRemote(
  door: DoorContext,
  environment: Extract<ResolvedEnvironment, { remote: true }>,
  request: Omit<OrchestratorRequest, 'callId' | 'turnId' | 'environmentId' | 'environment'>,
  context: CallContext & { startedAt: number },
  command: string,
): Promise<LaunchResult> {
  const { argv, cwd, tty } = request;
  try {
    const notices = new SandboxNotices();
    const ids = { callId: context.callId, ...(context.turnId ? { turnId: context.turnId } : {}) };
    const snapshot =
      door.plan.shellSnapshot && argv.length === 3 && argv[1] === '-lc' && snapshotShellKind(argv[0]!)
        ? { scopeId: door.sessionId, shell: { name: snapshotShellKind(argv[0]!)!, path: argv[0]! } }
        : undefined;
    const outcome = await door.orchestrator.run(
      { ...ids, ...request, environmentId: environment.id },
      launchAttempt(
        {
          spawn: (spawn) =>
            environment.spawner.spawn({
              ...spawn,
              envPolicy: environment.envPolicy ?? encodeEnvPolicy(door.shellEnvironmentPolicy),
              ...(snapshot ? { shellSnapshot: snapshot } : {}),
            }),
        },
        {
          argv,
          cwd,
          // Only what ux adds; the rest comes from the server's own variables, by the policy.
          env: buildEnvironment({}, door.shellEnvironmentPolicy, door.threadId),
          tty,
          projectRoots: [environment.cwd],
        },
        notices,
        undefined,
        door.earlyExitWindowMs,
      ),
    );
    noteRerun(outcome, notices);
    return { outcome, interception: undefined };
  } catch (error) {
    return { failure: launchFailureResponse(context.startedAt, command, error) };
  }
}

/** A rerun after a denial may have been approved before the first run: the receipt says it happened. */
function noteRerun(outcome: OrchestratorOutcome<Launched>, notices: SandboxNotices): void {
  if (outcome.status === 'completed' && outcome.escalated)
    notices.note(
      outcome.sandbox === null
        ? 'the sandbox blocked the first run; as approved, it ran again WITHOUT the sandbox'
        : 'the sandbox blocked the first run; it ran again in the same sandbox',
    );
}

/** A plain login command: the login files may reset PATH, so the door's directories go first again. */
function withPathAfterLogin(argv: string[], line: string): string[] {
  if (line === '' || argv.length !== 3 || argv[1] !== '-lc') return argv;
  return [argv[0]!, '-lc', `${line}${argv[2]}`];
}
