import { relative } from 'node:path';
import type { PatchSummary } from './summarize-patch.js';

const LETTER = { add: 'A', update: 'M', delete: 'D' } as const;

/**
 * Renders the text Codex's apply_patch prints on success: added files first, then modified (a moved
 * file under its new name), then deleted, each path relative to the working directory.
 */
export function formatPatchSummary(
  summary: PatchSummary,
  options: {
    /** How a path is written on its line (the door shows control characters as escapes). */
    quote?: (path: string) => string;
  } = {},
): string {
  const quote = options.quote ?? ((path: string) => path);
  const rows: string[] = [];
  for (const kind of ['add', 'update', 'delete'] as const) {
    for (const change of summary.changes) {
      if (change.kind !== kind) continue;
      const row = `${LETTER[kind]} ${quote(display(summary.cwd, change.movedTo ?? change.path))}`;
      if (!rows.includes(row)) rows.push(row);
    }
  }
  return `Success. Updated the following files:\n${rows.map((row) => `${row}\n`).join('')}`;
}

function display(cwd: string, path: string): string {
  return relative(cwd, path) || '.';
}
