import type { SandboxContext } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { policyFromWireSandbox } from './wire-sandbox-policy.js';

const base = { windowsSandboxLevel: 'disabled' as const };

describe('policyFromWireSandbox', () => {
  it('asks for no sandbox when there is none or permissions are disabled', () => {
    expect(policyFromWireSandbox(null)).toBeUndefined();
    expect(policyFromWireSandbox({ ...base, permissions: { type: 'disabled' } })).toBeUndefined();
  });

  it('reads the workspace-write entries Codex sends, with workspaceRoots as project roots', () => {
    const context: SandboxContext = {
      ...base,
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
            { path: { type: 'path', path: 'file:///home/dev/.ssh' }, access: 'deny' },
            { path: { type: 'glob_pattern', pattern: '**/*.env' }, access: 'none' },
          ],
          glob_scan_max_depth: 500,
        },
        network: 'restricted',
      },
      workspaceRoots: ['file:///work/ws'],
    };
    expect(policyFromWireSandbox(context)).toEqual({
      policy: {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'project_roots' }, access: 'write' },
            { path: { type: 'special', value: 'project_roots', subpath: '.git' }, access: 'read' },
            { path: { type: 'path', path: '/home/dev/.ssh' }, access: 'none' },
            { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
          ],
          glob_scan_max_depth: 64,
        },
        network: 'restricted',
      },
      projectRoots: ['/work/ws'],
    });
  });

  it('grants project_roots nothing without workspaceRoots, as Codex does', () => {
    const request = policyFromWireSandbox({
      ...base,
      permissions: { type: 'managed', file_system: { type: 'unrestricted' }, network: 'enabled' },
    });
    expect(request).toEqual({
      policy: { fileSystem: { kind: 'unrestricted' }, network: 'enabled' },
      projectRoots: [],
    });
    expect(
      policyFromWireSandbox({ ...base, permissions: { type: 'external', network: 'restricted' } })?.policy,
    ).toEqual({
      fileSystem: { kind: 'external-sandbox' },
      network: 'restricted',
    });
  });

  it('refuses what it cannot express exactly', () => {
    const odd = (path: object) => ({
      ...base,
      permissions: {
        type: 'managed' as const,
        file_system: { type: 'restricted' as const, entries: [{ path, access: 'read' as const }] },
        network: 'restricted' as const,
      },
    });
    expect(() =>
      policyFromWireSandbox(odd({ type: 'special', value: { kind: 'home' } }) as SandboxContext),
    ).toThrow('unknown special path kind "home"');
    expect(() => policyFromWireSandbox(odd({ type: 'path', path: '/bare/path' }) as SandboxContext)).toThrow(
      'invalid URI',
    );
  });
});
