/**
 * Symbolic locations, resolved per run:
 * `root` (/), `minimal` (the platform's defaults needed to run programs; each backend expands it),
 * `cwd`, `project_roots` (the workspace roots, default the cwd), `tmpdir` ($TMPDIR), `slash_tmp` (/tmp).
 */
export const specialPathNames = ['root', 'minimal', 'cwd', 'project_roots', 'tmpdir', 'slash_tmp'] as const;
export type SpecialPathName = (typeof specialPathNames)[number];
