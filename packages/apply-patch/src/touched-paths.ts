import type { PatchPlan } from './plan-patch.js';

/**
 * Every absolute path the plan writes or removes (move destinations and sources included), once each,
 * in patch order: what the caller's policy check must allow before `applyPlan` runs. Paths are
 * lexical (`cwd` joined with the patch path); resolve symlinks before comparing them with roots.
 */
export function touchedPaths(plan: PatchPlan): string[] {
  const paths = new Set<string>();
  for (const change of plan.changes) {
    paths.add(change.path);
    if (change.movedTo !== undefined) paths.add(change.movedTo);
  }
  return [...paths];
}
