import type { EffectivePolicy, LaunchPlan, SandboxNotice } from '@ux/protocol/core';
import type { SandboxLayout } from '@ux/protocol-utils';
import type { CreatedRepositories } from './created-repositories.js';
import type { GuardTarget, PathGuard } from './path-guard.js';

/** What a Linux backend planned, before the path guard watches it. */
export interface GuardedPlanInput {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  sandboxType: string;
  notes: string[];
  guardTargets: readonly GuardTarget[];
  layout: SandboxLayout;
  /** The policy the plan was made for (with the repositories already known). */
  policy: EffectivePolicy;
  plannedAt: number;
}

/**
 * The launch plan of a backend that leans on the path guard (bwrap, Landlock): the guard watches the
 * plan's targets before the plan is returned, so before anything runs under it (a guard that cannot
 * watch fails the plan: closed); notices are kept for listeners that subscribe later; and once the
 * sandbox has ended, the repositories the command created are checked (docs/protected-paths.md).
 */
export async function guardedLaunchPlan(
  input: GuardedPlanInput,
  guard: PathGuard,
  repositories: CreatedRepositories,
): Promise<LaunchPlan> {
  const notices: SandboxNotice[] = [];
  const listeners = new Set<(notice: SandboxNotice) => void>();
  const watch = await guard.watch(input.guardTargets, (notice) => {
    notices.push(notice);
    for (const listener of listeners) listener(notice);
  });
  return {
    argv: input.argv,
    cwd: input.cwd,
    env: input.env,
    sandboxType: input.sandboxType,
    enforcement: { fileSystem: 'enforced', network: 'enforced', notes: input.notes },
    cleanup: async () => {
      const scan = repositories.scan(input.layout, input.policy, input.plannedAt);
      await watch.stop({ repositories: scan.checks });
      repositories.remember(scan.workTrees);
    },
    onNotice(listener) {
      for (const notice of notices) listener(notice);
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
