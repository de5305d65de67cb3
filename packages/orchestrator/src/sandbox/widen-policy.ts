import { resolve } from 'node:path';
import type { AdditionalPermissions, EffectivePolicy, FileSystemEntry } from '@ux/protocol/core';

/**
 * The policy with a command's approved `additional_permissions`: extra readable and writable paths
 * (relative ones resolved against the command's cwd, `~/…` kept for the backend to expand) and
 * network access. It only widens; it never takes a permission away.
 */
export function widenPolicy(
  policy: EffectivePolicy,
  additional: AdditionalPermissions | undefined,
  cwd: string,
): EffectivePolicy {
  if (!additional) return policy;
  const network = additional.network?.enabled ? 'enabled' : policy.network;
  if (policy.fileSystem.kind !== 'restricted') return { ...policy, network };
  const entry = (path: string, access: 'read' | 'write'): FileSystemEntry => ({
    path: { type: 'path', path: path === '~' || path.startsWith('~/') ? path : resolve(cwd, path) },
    access,
  });
  const extra = [
    ...(additional.file_system?.read ?? []).map((path) => entry(path, 'read')),
    ...(additional.file_system?.write ?? []).map((path) => entry(path, 'write')),
  ];
  // Everything else of the policy (the proxy's endpoint, the unix socket list) stays as it was.
  return {
    ...policy,
    network,
    fileSystem: { ...policy.fileSystem, entries: [...policy.fileSystem.entries, ...extra] },
  };
}
