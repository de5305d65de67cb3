import type { ExecProcess, LaunchPlan, SpawnRequest } from '@ux/protocol/core';

export interface LaunchPlannedOptions<R extends SpawnRequest> {
  /** What to start. A plan's argv, cwd and env replace the request's; the rest is kept. */
  request: R;
  /** Starts the process: a `Spawner`'s `spawn`, a remote one's, or a wrapper that words its errors. */
  spawn: (request: R) => Promise<ExecProcess>;
  /** Plans the sandbox around the request (a backend's `plan`); absent: the request runs as it is. */
  plan?: () => Promise<LaunchPlan>;
  /**
   * The caller's own clean-up (an escalation session): after a failed plan or start, or once the
   * process closed; before the plan's.
   */
  release?: () => Promise<void>;
}

export interface PlannedLaunch {
  process: ExecProcess;
  /** The sandbox plan the process was started from, when there was one. */
  plan: LaunchPlan | undefined;
  /**
   * Resolves once the process closed (exited, every output byte delivered) and the clean-ups ran:
   * `release`, then the plan's `cleanup`, each once. Never rejects.
   */
  settled: Promise<void>;
}

/**
 * The one plan → spawn → clean-up sequence: plan the sandbox (when asked), start the planned command,
 * and clean up exactly once — right away when planning or starting fails (the error is rethrown as
 * it was, a failing clean-up does not hide it), otherwise after the process closed.
 */
export async function launchPlanned<R extends SpawnRequest>(
  options: LaunchPlannedOptions<R>,
): Promise<PlannedLaunch> {
  let plan: LaunchPlan | undefined;
  try {
    plan = options.plan ? await options.plan() : undefined;
  } catch (error) {
    await bestEffort(options.release);
    throw error;
  }
  const cleanUp = async () => {
    await bestEffort(options.release);
    await bestEffort(plan?.cleanup);
  };
  let process: ExecProcess;
  try {
    process = await options.spawn(
      plan ? { ...options.request, argv: plan.argv, cwd: plan.cwd, env: plan.env } : options.request,
    );
  } catch (error) {
    await cleanUp();
    throw error;
  }
  return { process, plan, settled: process.closed.then(cleanUp) };
}

/** Runs a clean-up step; its failure is swallowed (the process is over, or failed to start, either way). */
async function bestEffort(step: (() => Promise<void>) | undefined): Promise<void> {
  try {
    await step?.();
  } catch {
    // Best effort: what cannot be cleaned up now is not worth losing the caller's result or error over.
  }
}
