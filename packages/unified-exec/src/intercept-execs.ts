import type { OrchestratorRequest, SelectedSandbox } from '@ux/orchestrator';
import type { ExecAction, InterceptedExec } from '@ux/zsh-fork';
import type { DoorContext } from './door-context.js';
import { escalationEnvironment } from './escalation-environment.js';
import type { SandboxNotices } from './sandbox-notices.js';

/** At most this many escalations are named in one command's receipt; the rest are counted. */
export const ESCALATION_NOTES_MAX = 5;

/** The execs of one command, decided one by one (ZshFork). */
export interface ExecInterception {
  /** Answers one intercepted exec of an attempt that runs in `sandbox`. */
  decide(exec: InterceptedExec, sandbox: SelectedSandbox | null, signal: AbortSignal): Promise<ExecAction>;
  /** How many approvals are waiting for an answer now (a one-shot command's timeout stops meanwhile). */
  readonly pending: number;
  /** Called when the count changes. */
  onPendingChange(listener: () => void): void;
}

/**
 * Sends each exec the zsh fork intercepts to the orchestrator (which owns every decision) and turns
 * its answer into the broker's: run in place, deny, or escalate, with a sanitised environment and, for
 * a narrower sandbox, that sandbox's launch plan. An abort at a per-exec prompt stops the turn.
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
  const listeners = new Set<() => void>();
  const changed = (delta: number) => {
    pending += delta;
    for (const listener of listeners) listener();
  };
  return {
    get pending() {
      return pending;
    },
    onPendingChange: (listener) => void listeners.add(listener),
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
          parent: {
            ...(request.sandboxPermissions ? { sandboxPermissions: request.sandboxPermissions } : {}),
            ...(request.additionalPermissions
              ? { additionalPermissions: request.additionalPermissions }
              : {}),
            sandbox,
            projectRoot: door.cwd,
          },
          signal,
        });
      } finally {
        changed(-1);
      }
      if (decision.action === 'run') return { action: 'run' };
      if (decision.action === 'deny') {
        if (decision.aborted) door.abortTurn();
        return { action: 'deny', reason: decision.reason };
      }

      const { env, dropped } = escalationEnvironment(exec.env, doorEnv);
      const argv = [decision.program, ...exec.argv.slice(1)];
      escalations += 1;
      if (escalations <= ESCALATION_NOTES_MAX) {
        const where = decision.sandbox ? 'in a wider sandbox' : 'OUTSIDE the sandbox';
        const scrubbed = dropped.length > 0 ? ` (without ${dropped.join(', ')})` : '';
        notices.note(`ran \`${exec.argv.join(' ').slice(0, 200)}\` ${where}, as policy allows${scrubbed}`);
      } else if (escalations === ESCALATION_NOTES_MAX + 1) {
        notices.note('more programs ran outside the sandbox; only the first ones are listed');
      }
      if (!decision.sandbox) return { action: 'escalate', argv, cwd: exec.workdir, env };
      const plan = await decision.sandbox.backend.plan({
        argv,
        cwd: exec.workdir,
        env,
        policy: decision.sandbox.policy,
        tty: false,
        projectRoots: [door.cwd],
      });
      plan.onNotice?.((notice) => notices.add(notice));
      return {
        action: 'escalate',
        argv: [...plan.argv],
        cwd: plan.cwd ?? exec.workdir,
        env: plan.env ?? env,
        onExit: () => void plan.cleanup?.(),
      };
    },
  };
}
