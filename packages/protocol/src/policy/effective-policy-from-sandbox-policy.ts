import type { EffectivePolicy, FileSystemEntry } from './file-system-policy.js';
import type { SandboxPolicy } from './sandbox-policy.js';

/**
 * Translates the classic sandbox policy into the split form every backend consumes.
 * workspace-write writes go to the cwd, the extra writable roots, /tmp and $TMPDIR (unless excluded);
 * protected metadata under writable roots is the backend's business, not this translation's.
 */
export function effectivePolicyFromSandboxPolicy(policy: SandboxPolicy): EffectivePolicy {
  switch (policy.type) {
    case 'danger-full-access':
      return { fileSystem: { kind: 'unrestricted' }, network: 'enabled' };
    case 'external-sandbox':
      return { fileSystem: { kind: 'external-sandbox' }, network: policy.network_access };
    case 'read-only':
      return {
        fileSystem: {
          kind: 'restricted',
          entries: [{ path: { type: 'special', value: 'root' }, access: 'read' }],
        },
        network: policy.network_access ? 'enabled' : 'restricted',
      };
    case 'workspace-write': {
      const entries: FileSystemEntry[] = [
        { path: { type: 'special', value: 'root' }, access: 'read' },
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
        ...policy.writable_roots.map(
          (root): FileSystemEntry => ({ path: { type: 'path', path: root }, access: 'write' }),
        ),
      ];
      if (!policy.exclude_slash_tmp)
        entries.push({ path: { type: 'special', value: 'slash_tmp' }, access: 'write' });
      if (!policy.exclude_tmpdir_env_var)
        entries.push({ path: { type: 'special', value: 'tmpdir' }, access: 'write' });
      return {
        fileSystem: { kind: 'restricted', entries },
        network: policy.network_access ? 'enabled' : 'restricted',
      };
    }
  }
}
