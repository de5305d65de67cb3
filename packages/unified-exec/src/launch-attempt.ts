import type { Attempt } from '@ux/orchestrator';
import { OutputTracker, waitForEarlyExit } from '@ux/spawn';
import type { Launched, ProcessStarter } from './door-context.js';

export interface LaunchRequest {
  argv: readonly string[];
  cwd: string;
  env: Record<string, string>;
  tty: boolean;
  /** Workspace roots for `project_roots` in sandbox policies. */
  projectRoots: readonly string[];
}

/**
 * The one `attempt` the orchestrator is given: plan the sandbox (when one is chosen), start the process,
 * and wait out the early-exit window so a fast denial can be judged. It never retries by itself.
 */
export function launchAttempt(spawner: ProcessStarter, request: LaunchRequest): Attempt<Launched> {
  return async (sandbox) => {
    const plan = sandbox
      ? await sandbox.backend.plan({
          argv: request.argv,
          cwd: request.cwd,
          env: request.env,
          policy: sandbox.policy,
          tty: request.tty,
          projectRoots: request.projectRoots,
        })
      : undefined;
    let process: Launched['process'];
    try {
      process = await spawner.spawn({
        argv: plan?.argv ?? request.argv,
        cwd: plan?.cwd ?? request.cwd,
        env: plan?.env ?? request.env,
        tty: request.tty,
        stdin: 'closed',
      });
    } catch (error) {
      await plan?.cleanup?.();
      throw error;
    }
    // Mount points and other traces of the sandbox go once the process and its output are done.
    if (plan?.cleanup) void process.closed.then(() => plan.cleanup?.()).catch(() => {});
    const tracker = new OutputTracker(process);
    const launched: Launched = { process, tracker, plan, sandboxType: plan?.sandboxType ?? 'none' };
    const early = await waitForEarlyExit(process, tracker);
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
