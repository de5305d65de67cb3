import type { Attempt } from '@ux/orchestrator';
import { OutputTracker, waitForEarlyExit } from '@ux/spawn';
import type { EscalationBroker, EscalationSession } from '@ux/zsh-fork';
import type { Launched, ProcessStarter } from './door-context.js';
import type { ExecInterception } from './intercept-execs.js';
import type { SandboxNotices } from './sandbox-notices.js';

export interface LaunchRequest {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  tty: boolean;
  /** Workspace roots for `project_roots` in sandbox policies. */
  projectRoots: readonly string[];
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
  return async (sandbox) => {
    // ZshFork: a broker session per attempt; its socket reaches the shell through the spawn helper
    // (and the sandbox keeps that one descriptor), its variables through the environment.
    let session: EscalationSession | undefined;
    if (interception) {
      const { execs } = interception;
      session = await interception.broker.openSession((exec, context) =>
        execs.decide(exec, sandbox, context.signal),
      );
    }
    const env = session ? { ...request.env, ...session.env } : request.env;
    let plan: Awaited<ReturnType<NonNullable<typeof sandbox>['backend']['plan']>> | undefined;
    try {
      plan = sandbox
        ? await sandbox.backend.plan({
            argv: request.argv,
            cwd: request.cwd,
            env,
            policy: sandbox.policy,
            tty: request.tty,
            projectRoots: request.projectRoots,
            ...(session ? { keepFds: [session.spawnEscalation.fd] } : {}),
          })
        : undefined;
    } catch (error) {
      await session?.close();
      throw error;
    }
    plan?.onNotice?.((notice) => notices.add(notice));
    let process: Launched['process'];
    try {
      process = await spawner.spawn({
        argv: plan?.argv ?? request.argv,
        cwd: plan?.cwd ?? request.cwd,
        env: plan?.env ?? env,
        tty: request.tty,
        stdin: 'closed',
        ...(session ? { escalation: session.spawnEscalation } : {}),
      });
    } catch (error) {
      await plan?.cleanup?.();
      await session?.close();
      throw error;
    }
    // The sandbox's watches and other traces go once the process and its output are done; its last
    // notices are in by the time `settled` resolves. The broker session ends with the process: its
    // escalated children are ended with it.
    const settled = process.closed
      .then(async () => {
        await session?.close();
        await plan?.cleanup?.();
      })
      .catch(() => {});
    const tracker = new OutputTracker(process);
    const launched: Launched = {
      process,
      tracker,
      plan,
      sandboxType: plan?.sandboxType ?? 'none',
      notices,
      settled: () => within(settled, SANDBOX_SETTLE_MAX_MS),
    };
    const early = await waitForEarlyExit(
      process,
      tracker,
      earlyExitWindowMs === undefined ? {} : { graceMs: earlyExitWindowMs },
    );
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

/** Resolves when `promise` does or after `ms`, whichever is first; never rejects. */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise((resolve) => (timer = setTimeout(resolve, ms)))]);
  clearTimeout(timer);
}
