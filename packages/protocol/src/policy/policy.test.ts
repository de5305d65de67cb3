import { describe, expect, it } from 'vitest';
import { approvalPolicySchema, granularApprovalConfigSchema } from './approval-policy.js';
import { approvalPolicyName, granularApprovalConfig, granularPromptKinds } from './approval-policy-names.js';
import { effectivePolicyFromSandboxPolicy } from './effective-policy-from-sandbox-policy.js';
import type { FileSystemPolicy } from './file-system-policy.js';
import { hasDenyRead } from './has-deny-read.js';
import { sandboxPolicySchema } from './sandbox-policy.js';

describe('approval policy', () => {
  it('names the same prompt kinds and defaults without zod as the granular schema', () => {
    expect(Object.keys(granularApprovalConfigSchema.shape)).toEqual([...granularPromptKinds]);
    expect(granularApprovalConfig()).toEqual(granularApprovalConfigSchema.parse({}));
    expect(granularApprovalConfig({ rules: false })).toEqual(
      granularApprovalConfigSchema.parse({ rules: false }),
    );
  });

  it('accepts the four names and granular with defaults', () => {
    for (const name of ['untrusted', 'on-failure', 'on-request', 'never'] as const) {
      expect(approvalPolicySchema.parse(name)).toBe(name);
      expect(approvalPolicyName(name)).toBe(name);
    }
    const granular = approvalPolicySchema.parse({ granular: { sandbox_approval: false } });
    expect(granular).toEqual({
      granular: {
        sandbox_approval: false,
        rules: true,
        skill_approval: true,
        request_permissions: true,
        mcp_elicitations: true,
      },
    });
    expect(approvalPolicyName(granular)).toBe('granular');
  });

  it('rejects unknown names and unknown granular keys', () => {
    expect(approvalPolicySchema.safeParse('sometimes').success).toBe(false);
    expect(approvalPolicySchema.safeParse({ granular: { sandbox: true } }).success).toBe(false);
  });
});

describe('sandbox policy', () => {
  it('fills defaults and keeps the wire tags', () => {
    expect(sandboxPolicySchema.parse({ type: 'workspace-write' })).toEqual({
      type: 'workspace-write',
      writable_roots: [],
      network_access: false,
      exclude_tmpdir_env_var: false,
      exclude_slash_tmp: false,
    });
    expect(sandboxPolicySchema.parse({ type: 'read-only' })).toEqual({
      type: 'read-only',
      network_access: false,
    });
    expect(sandboxPolicySchema.parse({ type: 'external-sandbox' })).toEqual({
      type: 'external-sandbox',
      network_access: 'restricted',
    });
  });

  it('rejects relative writable roots and unknown modes', () => {
    const relative = sandboxPolicySchema.safeParse({ type: 'workspace-write', writable_roots: ['build'] });
    expect(relative.success).toBe(false);
    expect(relative.error?.issues[0]).toMatchObject({
      path: ['writable_roots', 0],
      message: 'must be an absolute path',
    });
    expect(sandboxPolicySchema.safeParse({ type: 'yolo' }).success).toBe(false);
    expect(
      sandboxPolicySchema.safeParse({ type: 'workspace-write', writable_roots: ['C:\\build'] }).success,
    ).toBe(true);
  });

  it('translates every classic policy into the split form', () => {
    expect(effectivePolicyFromSandboxPolicy({ type: 'danger-full-access' })).toEqual({
      fileSystem: { kind: 'unrestricted' },
      network: 'enabled',
    });
    expect(
      effectivePolicyFromSandboxPolicy({ type: 'external-sandbox', network_access: 'restricted' }),
    ).toEqual({
      fileSystem: { kind: 'external-sandbox' },
      network: 'restricted',
    });
    expect(effectivePolicyFromSandboxPolicy({ type: 'read-only', network_access: true })).toEqual({
      fileSystem: {
        kind: 'restricted',
        entries: [{ path: { type: 'special', value: 'root' }, access: 'read' }],
      },
      network: 'enabled',
    });
    expect(
      effectivePolicyFromSandboxPolicy({
        type: 'workspace-write',
        writable_roots: ['/data'],
        network_access: false,
        exclude_tmpdir_env_var: true,
        exclude_slash_tmp: false,
      }),
    ).toEqual({
      fileSystem: {
        kind: 'restricted',
        entries: [
          { path: { type: 'special', value: 'root' }, access: 'read' },
          { path: { type: 'special', value: 'cwd' }, access: 'write' },
          { path: { type: 'path', path: '/data' }, access: 'write' },
          { path: { type: 'special', value: 'slash_tmp' }, access: 'write' },
        ],
      },
      network: 'restricted',
    });
  });
});

describe('hasDenyRead', () => {
  const policy: FileSystemPolicy = {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
    ],
  };

  it('reports deny-read', () => {
    expect(hasDenyRead(policy)).toBe(true);
    expect(hasDenyRead({ kind: 'restricted', entries: [] })).toBe(false);
    expect(hasDenyRead({ kind: 'unrestricted' })).toBe(false);
  });
});
