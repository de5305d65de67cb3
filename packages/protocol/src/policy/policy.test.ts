import { describe, expect, it } from 'vitest';
import { approvalPolicySchema, granularApprovalConfigSchema } from './approval-policy.js';
import { approvalPolicyName, granularApprovalConfig, granularPromptKinds } from './approval-policy-names.js';
import { effectivePolicyFromSandboxPolicy } from './effective-policy-from-sandbox-policy.js';
import type { FileSystemPolicy } from './file-system-policy.js';
import { globToRegExp } from './glob-to-regexp.js';
import { hasDenyRead } from './has-deny-read.js';
import { resolveAccess } from './resolve-access.js';
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

describe('resolveAccess', () => {
  const context = { cwd: '/home/dev/proj', homeDir: '/home/dev', tmpdir: '/var/tmp/x' };
  const policy: FileSystemPolicy = {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
      { path: { type: 'special', value: 'cwd', subpath: '.git' }, access: 'read' },
      { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' },
      { path: { type: 'path', path: '~/.ssh' }, access: 'none' },
      { path: { type: 'special', value: 'tmpdir' }, access: 'write' },
    ],
  };

  it.each([
    ['/etc/passwd', 'read'],
    ['/home/dev/proj/src/a.ts', 'write'],
    ['/home/dev/proj', 'write'],
    ['/home/dev/project-other/x', 'read'],
    ['/home/dev/proj/.git/config', 'read'],
    ['/home/dev/proj/.env', 'none'],
    ['/home/dev/proj/deep/er/prod.env', 'none'],
    ['/home/dev/proj/prod.env.example', 'write'],
    ['/home/dev/.ssh/id_ed25519', 'none'],
    ['/var/tmp/x/build.o', 'write'],
    ['src/main.ts', 'write'],
  ])('%s → %s', (path, expected) => {
    expect(resolveAccess(policy, path, context)).toBe(expected);
  });

  it('lets none beat write and write beat read at equal depth', () => {
    const tie: FileSystemPolicy = {
      kind: 'restricted',
      entries: [
        { path: { type: 'path', path: '/a' }, access: 'read' },
        { path: { type: 'path', path: '/a' }, access: 'write' },
        { path: { type: 'path', path: '/b' }, access: 'write' },
        { path: { type: 'path', path: '/b' }, access: 'none' },
      ],
    };
    expect(resolveAccess(tie, '/a/x', { cwd: '/' })).toBe('write');
    expect(resolveAccess(tie, '/b/x', { cwd: '/' })).toBe('none');
    expect(resolveAccess(tie, '/c', { cwd: '/' })).toBe('none');
  });

  it('grants everything under unrestricted and external policies', () => {
    expect(resolveAccess({ kind: 'unrestricted' }, '/etc/shadow', context)).toBe('write');
    expect(resolveAccess({ kind: 'external-sandbox' }, '/etc/shadow', context)).toBe('write');
  });

  it('resolves Windows paths case-insensitively', () => {
    const windows: FileSystemPolicy = {
      kind: 'restricted',
      entries: [
        { path: { type: 'special', value: 'root' }, access: 'read' },
        { path: { type: 'special', value: 'cwd' }, access: 'write' },
        { path: { type: 'glob', pattern: '**\\*.pem' }, access: 'none' },
      ],
    };
    const winContext = { cwd: 'C:\\Users\\Dev\\Proj', pathStyle: 'win32' as const };
    expect(resolveAccess(windows, 'c:\\users\\dev\\proj\\src\\a.ts', winContext)).toBe('write');
    expect(resolveAccess(windows, 'C:\\Windows\\System32', winContext)).toBe('read');
    expect(resolveAccess(windows, 'C:\\Users\\Dev\\Proj\\keys\\k.PEM', winContext)).toBe('none');
  });

  it('reports deny-read', () => {
    expect(hasDenyRead(policy)).toBe(true);
    expect(hasDenyRead({ kind: 'restricted', entries: [] })).toBe(false);
    expect(hasDenyRead({ kind: 'unrestricted' })).toBe(false);
  });
});

describe('globToRegExp', () => {
  it.each([
    ['*.env', '.env', true],
    ['*.env', 'a/.env', false],
    ['**/*.env', 'a/b/c.env', true],
    ['**/*.env', 'c.env', true],
    ['a/**/b', 'a/b', true],
    ['a/**/b', 'a/x/y/b', true],
    ['a/**', 'a/x/y', true],
    ['a/**', 'a', false],
    ['file?.txt', 'file1.txt', true],
    ['file?.txt', 'file10.txt', false],
    ['[abc].js', 'b.js', true],
    ['[!abc].js', 'b.js', false],
    ['[!abc].js', 'd.js', true],
    ['a.b', 'axb', false],
    ['\\*literal', '*literal', true],
    ['[unclosed', '[unclosed', true],
  ])('%s matches %s: %s', (pattern, path, expected) => {
    expect(globToRegExp(pattern).test(path)).toBe(expected);
  });
});
