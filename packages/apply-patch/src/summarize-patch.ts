import type { PatchChangeKind, PatchPlan } from './plan-patch.js';

export interface PatchSummaryChange {
  /** Absolute path of the file added, updated or deleted (the source of a move). */
  path: string;
  kind: PatchChangeKind;
  /** Absolute destination of a move. */
  movedTo?: string;
  added: number;
  removed: number;
}

export interface PatchSummary {
  /** The directory the patch was applied in; `formatPatchSummary` shows paths relative to it. */
  cwd: string;
  changes: PatchSummaryChange[];
}

/** The change summary of a plan: one entry per file operation, without file contents. */
export function summarizePatch(plan: PatchPlan): PatchSummary {
  return {
    cwd: plan.cwd,
    changes: plan.changes.map(({ path, kind, movedTo, added, removed }) =>
      movedTo === undefined ? { path, kind, added, removed } : { path, kind, movedTo, added, removed },
    ),
  };
}
