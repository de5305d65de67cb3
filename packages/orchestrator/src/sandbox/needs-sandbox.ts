import type { EffectivePolicy, FileSystemPolicy } from '@ux/protocol/core';

/**
 * Whether the platform sandbox must wrap a command (Codex's `selectInitial` with preference auto):
 * when a managed network proxy is active (or the policy's network is `proxied`); when the network is restricted and no outer sandbox
 * enforces the policy; or when the file system is restricted short of writing everywhere.
 * `danger-full-access` needs none.
 */
export function needsSandbox(policy: EffectivePolicy, options: { managedNetwork?: boolean } = {}): boolean {
  // A proxied network exists only inside a sandbox: without one the command would have the host's.
  if (options.managedNetwork || policy.network === 'proxied') return true;
  const kind = policy.fileSystem.kind;
  if (policy.network === 'restricted' && kind !== 'external-sandbox') return true;
  return kind === 'restricted' && !hasFullDiskWrite(policy.fileSystem);
}

/** A restricted policy that writes the whole disk: a root entry with write, and only write entries. */
export function hasFullDiskWrite(policy: FileSystemPolicy): boolean {
  if (policy.kind !== 'restricted') return policy.kind === 'unrestricted';
  const writesRoot = policy.entries.some(
    (entry) =>
      entry.access === 'write' &&
      ((entry.path.type === 'special' && entry.path.value === 'root' && entry.path.subpath === undefined) ||
        (entry.path.type === 'path' && entry.path.path === '/')),
  );
  return writesRoot && policy.entries.every((entry) => entry.access === 'write');
}
