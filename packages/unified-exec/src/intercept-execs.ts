import type { OrchestratorRequest, SelectedSandbox } from '@ux/orchestrator';
import type { ExecAction, InterceptedExec } from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import type { DoorContext, Launched } from './door-context.js';
import { escalationEnvironment } from './escalation-environment.js';
import type { SandboxNotices } from './sandbox-notices.js';

/** At most this many escalations are named in one command's receipt; the rest are counted. */
export const ESCALATION_NOTES_MAX = 5;
/** At most this many programs kept in the sandbox (against what policy allowed) are named in one receipt. */
export const IN_PLACE_NOTES_MAX = 5;

/** A command's words as a notice quotes them: joined, cut to 200 characters, every control shown. */
function quoted(argv: readonly string[]): string {
  return readableText(argv.join(' ').slice(0, 200));
}

/** The execs of one command, decided one by one (ZshFork). */
export interface ExecInterception {
  /** Answers one intercepted exec of an attempt that runs in `sandbox`. */
  decide(exec: InterceptedExec, sandbox: SelectedSandbox | null, signal: AbortSignal): Promise<ExecAction>;
  /** How many approvals are waiting for an answer now (a one-shot command's timeout stops meanwhile). */
  readonly pending: number;
  /** Called when the count changes. */
  onPendingChange(listener: () => void): void;
  /**
   * The attempt now running (each attempt in turn): what it printed so far, and the process an abort
   * at a per-exec question ends.
   */
  watch(launched: Pick<Launched, 'process' | 'tracker'>): void;
  /** What the command printed so far, not taken from the model's next result; undefined before it starts. */
  outputSoFar(): Uint8Array | undefined;
  /** True once a person aborted at a per-exec question (the command was ended then). */
  readonly aborted: boolean;
}

/**
 * Sends each exec the zsh fork intercepts to the orchestrator (which owns every decision) and turns
 * its answer into the broker's: run in place, deny, or escalate, with the session's environment (only
 * terminal and locale variables pass from the shell: `escalationEnvironment`) in the directory the
 * orchestrator checked and, for a narrower sandbox, that sandbox's launch plan. A program policy would
 * let out but ux kept in the sandbox gets a notice saying why. An abort at a per-exec prompt refuses
 * the program, ends the command and stops the turn.
 */
export function interceptExecs(
  door: DoorContext,
  request: Omit<OrchestratorRequest, 'callId' | 'turnId'>,
  context: { callId: string; turnId?: string },
  notices: SandboxNotices,
  /** The environment the door gave the command (the trusted values for an escalated exec). */
  doorEnv: Readonly<Record<string, string>>,
): ExecInterception {
  let pending = 0;
  let escalations = 0;
  let current: Pick<Launched, 'process' | 'tracker'> | undefined;
  let aborted = false;
  /** Escalations the broker refused because the directory changed after the check. */
  let refusals = 0;
  const inPlace = new Set<string>();
  const listeners = new Set<() => void>();
  const changed = (delta: number) => {
    pending += delta;
    for (const listener of listeners) listener();
  };
  /** One line per distinct reason and program (a loop of `git status` says it once). */
  const noteInPlace = (argv: readonly string[], why: string) => {
    const key = `${argv[0] ?? ''}\0${why}`;
    // Past the cap nothing more is said, so nothing more is remembered either.
    if (inPlace.has(key) || inPlace.size > IN_PLACE_NOTES_MAX) return;
    inPlace.add(key);
    if (inPlace.size <= IN_PLACE_NOTES_MAX)
      notices.note(
        readableText(
          `ran \`${argv.join(' ').slice(0, 200)}\` inside the sandbox, not outside as policy allows: ${why}`,
        ),
      );
    else if (inPlace.size === IN_PLACE_NOTES_MAX + 1)
      notices.note('more programs were kept inside the sandbox; only the first ones are listed');
  };
  return {
    get pending() {
      return pending;
    },
    onPendingChange: (listener) => void listeners.add(listener),
    get aborted() {
      return aborted;
    },
    watch(launched) {
      current = launched;
      door.interceptions?.set(context.callId, this);
      void launched.process.exited.then(() => {
        if (current === launched && door.interceptions?.get(context.callId) === this)
          door.interceptions.delete(context.callId);
      });
    },
    outputSoFar: () => current?.tracker.buffer.snapshot(),
    async decide(exec, sandbox, signal) {
      changed(1);
      let decision: Awaited<ReturnType<DoorContext['orchestrator']['decideExec']>>;
      try {
        decision = await door.orchestrator.decideExec({
          callId: context.callId,
          ...(context.turnId ? { turnId: context.turnId } : {}),
          file: exec.file,
          argv: exec.argv,
          cwd: exec.workdir,
          env: exec.env,
          parent: {
            ...(request.sandboxPermissions ? { sandboxPermissions: request.sandboxPermissions } : {}),
            ...(request.additionalPermissions
              ? { additionalPermissions: request.additionalPermissions }
              : {}),
            sandbox,
            projectRoot: door.cwd,
            cwd: request.cwd,
            argv: request.argv,
            env: doorEnv,
          },
          signal,
        });
      } finally {
        changed(-1);
      }
      if (decision.action === 'run') {
        if (decision.inPlace !== undefined) noteInPlace(exec.argv, decision.inPlace);
        // The orchestrator vouches that the same exec of this command gets the same answer until the
        // rules change (the door then empties the broker's caches): the broker may answer it alone.
        // (An orchestrator that cannot say when its rules change never gets answers cached.)
        return decision.cacheable && typeof door.orchestrator.onExecPolicyChange === 'function'
          ? { action: 'run', cache: true }
          : { action: 'run' };
      }
      if (decision.action === 'deny') {
        if (decision.aborted) {
          // Abort means stop: the program is refused and the command that ran it is ended (its whole
          // process group) before the refusal reaches the wrapper, so not one more line of the script
          // runs; every call waiting on it returns.
          aborted = true;
          door.abortTurn();
          if (current) void current.process.terminate();
        }
        return { action: 'deny', reason: decision.reason };
      }

      // The directory the orchestrator checked stays open until the broker has entered it (or never
      // will): its inode cannot be reused meanwhile by a directory the sandbox makes.
      const pin = decision.cwdPin;
      let released = false;
      const release = () => {
        if (released) return;
        released = true;
        pin?.release();
      };
      if (pin) {
        if (signal.aborted) release();
        else signal.addEventListener('abort', release, { once: true });
      }
      let argv: string[];
      let env: Record<string, string>;
      try {
        const environment = escalationEnvironment(exec.env, doorEnv, decision.cwd);
        env = environment.env;
        argv = [decision.program, ...exec.argv.slice(1)];
        escalations += 1;
        if (escalations <= ESCALATION_NOTES_MAX) {
          const where = decision.sandbox ? 'in a wider sandbox' : 'OUTSIDE the sandbox';
          const { dropped } = environment;
          const scrubbed = dropped.length > 0 ? ` (without ${readableText(dropped.join(', '))})` : '';
          notices.note(`ran \`${quoted(exec.argv)}\` ${where}, as policy allows${scrubbed}`);
        } else if (escalations === ESCALATION_NOTES_MAX + 1) {
          notices.note('more programs ran outside the sandbox; only the first ones are listed');
        }
      } catch (error) {
        release();
        throw error;
      }
      if (!decision.sandbox)
        return {
          action: 'escalate',
          argv,
          cwd: decision.cwd,
          env,
          ...(pin
            ? {
                // The broker enters this very directory, below these very directories, or runs nothing.
                cwdIdentity: { ...pin.identity, ancestors: pin.ancestors },
                onSettled: release,
                onCwdChanged: () => {
                  refusals += 1;
                  if (refusals <= ESCALATION_NOTES_MAX)
                    notices.note(
                      `did not run \`${quoted(exec.argv)}\` outside the sandbox after all: its working directory ${readableText(decision.cwd)} changed after ux checked it (something moved or replaced it meanwhile); it failed with 126`,
                    );
                  else if (refusals === ESCALATION_NOTES_MAX + 1)
                    notices.note(
                      'more programs were not run outside because their working directory changed; only the first ones are listed',
                    );
                },
              }
            : {}),
        };
      const plan = await decision.sandbox.backend.plan({
        argv,
        cwd: decision.cwd,
        env,
        policy: decision.sandbox.policy,
        tty: false,
        projectRoots: [door.cwd],
      });
      plan.onNotice?.((notice) => notices.add(notice));
      return {
        action: 'escalate',
        argv: [...plan.argv],
        cwd: plan.cwd ?? decision.cwd,
        env: plan.env ?? env,
        onExit: () => void plan.cleanup?.(),
      };
    },
  };
}
