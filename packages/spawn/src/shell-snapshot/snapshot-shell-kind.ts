import { basename } from 'node:path';

/** The shells a snapshot can be taken of. `sh` covers dash, ash and other POSIX shells: exports only. */
export type SnapshotShellKind = 'bash' | 'zsh' | 'sh';

const KINDS: Record<string, SnapshotShellKind> = {
  bash: 'bash',
  zsh: 'zsh',
  sh: 'sh',
  dash: 'sh',
  ash: 'sh',
};

/**
 * Which kind of snapshot a shell takes, from its file name: `bash`, `zsh` (the patched zsh of ZshFork is
 * also named `zsh`), `sh`/`dash`/`ash` → `'sh'`. `undefined` for anything else (pwsh, cmd, fish, ksh, …):
 * such a shell gets no snapshot and keeps its login files.
 */
export function snapshotShellKind(shellPath: string): SnapshotShellKind | undefined {
  if (typeof shellPath !== 'string' || shellPath === '') return undefined;
  const name = basename(shellPath.replace(/\\/g, '/'));
  return Object.hasOwn(KINDS, name) ? KINDS[name] : undefined;
}
