import type { EffectivePolicy, FileSystemEntry } from '@ux/protocol';
import { effectivePolicyFromSandboxPolicy } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { hasFullDiskWrite, needsSandbox } from './needs-sandbox.js';
import { widenPolicy } from './widen-policy.js';

const restricted = (
  entries: FileSystemEntry[],
  network: 'restricted' | 'enabled' = 'enabled',
): EffectivePolicy => ({
  fileSystem: { kind: 'restricted', entries },
  network,
});
const ROOT_WRITE: FileSystemEntry = { path: { type: 'special', value: 'root' }, access: 'write' };

describe('needsSandbox (selectInitial)', () => {
  it.each<[string, EffectivePolicy, boolean]>([
    ['read-only', effectivePolicyFromSandboxPolicy({ type: 'read-only', network_access: false }), true],
    [
      'read-only with network',
      effectivePolicyFromSandboxPolicy({ type: 'read-only', network_access: true }),
      true,
    ],
    [
      'workspace-write',
      effectivePolicyFromSandboxPolicy({
        type: 'workspace-write',
        writable_roots: [],
        network_access: true,
        exclude_tmpdir_env_var: false,
        exclude_slash_tmp: false,
      }),
      true,
    ],
    ['danger-full-access', effectivePolicyFromSandboxPolicy({ type: 'danger-full-access' }), false],
    [
      'full disk access with a proxied network (the network exists only inside a sandbox)',
      {
        fileSystem: { kind: 'unrestricted' },
        network: 'proxied',
        networkProxy: { unixSocket: '/tmp/p.sock' },
      },
      true,
    ],
    [
      'external sandbox, network restricted',
      { fileSystem: { kind: 'external-sandbox' }, network: 'restricted' },
      false,
    ],
    [
      'unrestricted files, network restricted',
      { fileSystem: { kind: 'unrestricted' }, network: 'restricted' },
      true,
    ],
    ['restricted with full-disk write, network enabled', restricted([ROOT_WRITE]), false],
    ['full-disk write, network restricted', restricted([ROOT_WRITE], 'restricted'), true],
  ])('%s → %s', (_name, policy, expected) => {
    expect(needsSandbox(policy)).toBe(expected);
  });

  it('always with a managed network proxy', () => {
    expect(
      needsSandbox(effectivePolicyFromSandboxPolicy({ type: 'danger-full-access' }), {
        managedNetwork: true,
      }),
    ).toBe(true);
  });
});

describe('hasFullDiskWrite', () => {
  it('needs a root write entry and nothing narrower', () => {
    expect(hasFullDiskWrite({ kind: 'unrestricted' })).toBe(true);
    expect(hasFullDiskWrite({ kind: 'external-sandbox' })).toBe(false);
    expect(hasFullDiskWrite({ kind: 'restricted', entries: [ROOT_WRITE] })).toBe(true);
    expect(
      hasFullDiskWrite({
        kind: 'restricted',
        entries: [{ path: { type: 'path', path: '/' }, access: 'write' }],
      }),
    ).toBe(true);
    expect(
      hasFullDiskWrite({
        kind: 'restricted',
        entries: [ROOT_WRITE, { path: { type: 'path', path: '/etc' }, access: 'read' }],
      }),
    ).toBe(false);
    expect(
      hasFullDiskWrite({
        kind: 'restricted',
        entries: [ROOT_WRITE, { path: { type: 'glob', pattern: '**/*.env' }, access: 'none' }],
      }),
    ).toBe(false);
    expect(
      hasFullDiskWrite({
        kind: 'restricted',
        entries: [{ path: { type: 'special', value: 'root', subpath: 'home' }, access: 'write' }],
      }),
    ).toBe(false);
    expect(hasFullDiskWrite({ kind: 'restricted', entries: [] })).toBe(false);
  });
});

describe('widenPolicy', () => {
  const base = restricted([{ path: { type: 'special', value: 'root' }, access: 'read' }], 'restricted');

  it('adds readable and writable paths and network, resolving relative paths against the cwd', () => {
    expect(
      widenPolicy(
        base,
        {
          network: { enabled: true },
          file_system: { read: ['../data', '~/notes'], write: ['out', '/tmp/x'] },
        },
        '/work/repo',
      ),
    ).toEqual({
      network: 'enabled',
      fileSystem: {
        kind: 'restricted',
        entries: [
          { path: { type: 'special', value: 'root' }, access: 'read' },
          { path: { type: 'path', path: '/work/data' }, access: 'read' },
          { path: { type: 'path', path: '~/notes' }, access: 'read' },
          { path: { type: 'path', path: '/work/repo/out' }, access: 'write' },
          { path: { type: 'path', path: '/tmp/x' }, access: 'write' },
        ],
      },
    });
  });

  it('keeps the proxy endpoint and the unix socket list of a proxied policy', () => {
    const proxied: EffectivePolicy = {
      ...base,
      network: 'proxied',
      networkProxy: { unixSocket: '/tmp/ux-net-1/proxy.sock' },
      allowUnixSockets: ['/run/agent.sock'],
    };
    expect(widenPolicy(proxied, { file_system: { write: ['out'] } }, '/w')).toMatchObject({
      network: 'proxied',
      networkProxy: { unixSocket: '/tmp/ux-net-1/proxy.sock' },
      allowUnixSockets: ['/run/agent.sock'],
    });
  });

  it('never narrows, and leaves the policy alone without additions', () => {
    expect(widenPolicy(base, undefined, '/w')).toBe(base);
    expect(widenPolicy({ ...base, network: 'enabled' }, { network: { enabled: false } }, '/w').network).toBe(
      'enabled',
    );
    expect(
      widenPolicy(
        { fileSystem: { kind: 'unrestricted' }, network: 'restricted' },
        { network: { enabled: true } },
        '/w',
      ),
    ).toEqual({
      fileSystem: { kind: 'unrestricted' },
      network: 'enabled',
    });
  });
});
