import type { Attempt } from '@ux/orchestrator';
import { type EscalationBroker, type EscalationSession, SandboxUnavailableError } from '@ux/protocol/core';
import { launchPlanned, OutputTracker, waitForEarlyExit } from '@ux/spawn';
import type { Launched, ProcessStarter } from './door-context.js';
import type { ExecInterception } from './intercept-execs.js';
import { planContradiction } from './plan-contradiction.js';
import type { SandboxNotices } from './sandbox-notices.js';

export interface LaunchRequest {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  tty: boolean;
  /** Workspace roots for `project_roots` in sandbox policies. */
  projectRoots: readonly string[];
  /** What the launch reads inside the sandbox (the snapshot, ux's PATH directories): `SandboxPlanRequest.hostPaths`. */
  hostPaths?: readonly string[];
}

/** Longest wait for a sandbox's clean-up (its last notices) before a receipt is rendered without them. */
export const SANDBOX_SETTLE_MAX_MS = 2_000;

/**
 * The one `attempt` the orchestrator is given: plan the sandbox (when one is chosen), start the process,
 * and wait out the early-exit window so a fast denial can be judged. It never retries by itself.
 * Every attempt's sandbox notices go to `notices`.
 */
export function launchAttempt(
  spawner: ProcessStarter,
  request: LaunchRequest,
  notices: SandboxNotices,
  interception?: { broker: EscalationBroker; execs: ExecInterception },
  earlyExitWindowMs?: number,
): Attempt<Launched> {
  return async (sandbox, context) => {
    // ZshFork: a broker session per attempt; its socket reaches the shell through the spawn helper
    // (and the sandbox keeps that one descriptor), its variables through the environment.
    const session: EscalationSession | undefined = interception
      ? await interception.broker.openSession((exec, context) =>
          interception.execs.decide(exec, sandbox, context.signal),
        )
      : undefined;
    const env = session ? { ...request.env, ...session.env } : request.env;
    const { process, plan, settled } = await launchPlanned({
      request: {
        argv: request.argv,
        cwd: request.cwd,
        env,
        tty: request.tty,
        stdin: 'closed',
        ...(session ? { escalation: session.spawnEscalation } : {}),
      },
      spawn: (spawn) => spawner.spawn(spawn),
      ...(sandbox
        ? {
            plan: async () => {
              const planned = await sandbox.backend.plan({
                argv: request.argv,
                cwd: request.cwd,
                env,
                policy: sandbox.policy,
                tty: request.tty,
                projectRoots: request.projectRoots,
                ...(request.hostPaths?.length ? { hostPaths: request.hostPaths } : {}),
                ...(session ? { keepFds: [session.spawnEscalation.fd] } : {}),
              });
              // A plan that contradicts the backend's declaration never runs (fail closed).
              const contradiction = planContradiction(planned, sandbox.policy);
              if (contradiction) {
                await planned.cleanup?.();
                throw new SandboxUnavailableError({
                  backend: sandbox.backend.id,
                  reason: contradiction,
                  fix: `report this to the maintainers of the ${sandbox.backend.id} backend; meanwhile prefer another backend (sandbox_backends)`,
                });
              }
              // Listening before the start: a notice of the very first moments is not lost.
              planned.onNotice?.((notice) => notices.add(notice));
              return planned;
            },
          }
        : {}),
      // The broker session ends with the process: its escalated children are ended with it. The
      // sandbox's watches and other traces go after it; its last notices are in once `settled` is.
      ...(session ? { release: () => session.close() } : {}),
    });
    const tracker = new OutputTracker(process);
    const launched: Launched = {
      process,
      tracker,
      plan,
      sandboxType: plan?.sandboxType ?? 'none',
      ...(plan
        ? {
            level: {
              backend: levelBackend(plan.sandboxType, process),
              ...(sandbox?.enforces ? { enforces: [...sandbox.enforces] } : {}),
              ...(sandbox?.passedOver?.length
                ? { passed_over: sandbox.passedOver.map((passed) => ({ ...passed })) }
                : {}),
              file_system: plan.enforcement.fileSystem,
              network: plan.enforcement.network,
            },
          }
        : {}),
      notices,
      settled: () => within(settled, SANDBOX_SETTLE_MAX_MS),
    };
    interception?.execs.watch(launched);
    // An interrupt or a shutdown stops the wait (never the process): the call gets it back at once.
    const early = await waitForEarlyExit(process, tracker, {
      ...(earlyExitWindowMs === undefined ? {} : { graceMs: earlyExitWindowMs }),
      ...(context?.signal ? { signal: context.signal } : {}),
    });
    if (!early.exited) return { value: launched };
    return {
      value: launched,
      earlyExit: {
        exitCode: early.status.exitCode,
        output: new TextDecoder().decode(early.output),
        ...(early.status.signal ? { signal: early.status.signal } : {}),
        // A remote host's own verdict (an exec-server's `sandboxDenied`) reaches the retry gates too.
        ...(early.status.sandboxDenied === undefined ? {} : { sandboxDenied: early.status.sandboxDenied }),
      },
    };
  };
}

/**
 * The backend named in a level: the plan's, and for a remote environment (`exec-server`) also the
 * sandbox the server reported it applied (its `process/start` result: `linuxSeccomp`, `macosSeatbelt`, …),
 * so the level says what really ran the command, not only where.
 */
function levelBackend(planned: string, process: unknown): string {
  const reported = (process as { sandboxType?: unknown }).sandboxType;
  if (planned !== 'exec-server' || typeof reported !== 'string' || reported === 'none') return planned;
  return `exec-server: ${reported}`;
}

/** Resolves when `promise` does or after `ms`, whichever is first; never rejects. */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
