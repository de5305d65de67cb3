import type { SandboxContext, WireFileSystemEntry } from '@ux/protocol/core';

/**
 * The workspace-write `sandbox` of `process/start` as Codex 0.169.0's client sends it
 * (docs/reference/exec-server-protocol.md §6), for the workspace at `workspaceUri` (its cwd and one
 * workspace root); `extra` entries go last.
 */
export function codexWorkspaceWriteContext(
  workspaceUri: string,
  extra: readonly WireFileSystemEntry[] = [],
): SandboxContext {
  return {
    permissions: {
      type: 'managed',
      file_system: {
        type: 'restricted',
        entries: [
          { path: { type: 'special', value: { kind: 'root' } }, access: 'read' },
          { path: { type: 'special', value: { kind: 'project_roots' } }, access: 'write' },
          {
            path: { type: 'special', value: { kind: 'project_roots', subpath: '.git' } },
            access: 'read',
            missing_path_behavior: 'skip',
          },
          ...extra,
        ],
      },
      network: 'restricted',
    },
    cwd: workspaceUri,
    workspaceRoots: [workspaceUri],
    windowsSandboxLevel: 'disabled',
    windowsSandboxProxySettingsMode: 'reconcile',
    useLegacyLandlock: false,
  };
}
