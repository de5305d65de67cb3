import { describe, expect, it } from 'vitest';
import type { EffectivePolicy } from '../policy/file-system-policy.js';
import { policyNeeds, SANDBOX_CAPABILITIES, unmetNeeds } from './sandbox-capabilities.js';

const readOnly: EffectivePolicy = {
  fileSystem: { kind: 'restricted', entries: [{ path: { type: 'special', value: 'root' }, access: 'read' }] },
  network: 'restricted',
};
const workspaceWrite: EffectivePolicy = {
  ...readOnly,
  fileSystem: {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
    ],
  },
};

const capabilities = (policy: EffectivePolicy) => policyNeeds(policy).map((need) => need.capability);

describe('policyNeeds', () => {
  it('asks a read-only policy with the network off for write limits and the network off, nothing more', () => {
    expect(capabilities(readOnly)).toEqual(['write_limits', 'network_off']);
  });

  it('asks for protected names once something is writable or ux has read-only state', () => {
    expect(capabilities(workspaceWrite)).toEqual(['write_limits', 'protected_names', 'network_off']);
    expect(capabilities({ ...readOnly, hostState: { readOnly: ['/home/me/.ux'] } })).toContain(
      'protected_names',
    );
  });

  it('asks for read-deny for a deny-read entry and for ux hidden directories', () => {
    const denied: EffectivePolicy = {
      ...readOnly,
      fileSystem: {
        kind: 'restricted',
        entries: [
          { path: { type: 'special', value: 'root' }, access: 'read' },
          { path: { type: 'path', path: '/home/me/.aws' }, access: 'none' },
        ],
      },
    };
    expect(capabilities(denied)).toContain('read_deny');
    expect(capabilities({ ...readOnly, hostState: { hidden: ['/run/ux'] } })).toContain('read_deny');
    expect(capabilities({ ...readOnly, hostState: { hidden: [] } })).not.toContain('read_deny');
  });

  it('asks for the network by domain, unix socket control and a private /tmp when the policy says so', () => {
    const needs = policyNeeds({
      ...readOnly,
      network: 'proxied',
      allowUnixSockets: ['/run/docker.sock'],
      privateTmp: true,
    });
    expect(needs.map((need) => need.capability)).toEqual([
      'write_limits',
      'network_by_domain',
      'unix_socket_control',
      'private_tmp',
    ]);
    expect(needs[2]!.because).toContain('/run/docker.sock');
    expect(capabilities({ ...readOnly, network: 'enabled' })).toEqual(['write_limits']);
  });

  it('asks nothing of the file system when it is unrestricted, nothing under an outer sandbox, and never process isolation or resource limits', () => {
    expect(capabilities({ fileSystem: { kind: 'unrestricted' }, network: 'enabled' })).toEqual([]);
    // The outer sandbox enforces all of an external-sandbox policy, the network included.
    expect(capabilities({ fileSystem: { kind: 'external-sandbox' }, network: 'restricted' })).toEqual([]);
    const all = capabilities({
      ...workspaceWrite,
      network: 'proxied',
      allowUnixSockets: ['/s'],
      privateTmp: true,
      hostState: { hidden: ['/h'], readOnly: ['/r'] },
    });
    expect(all).not.toContain('process_isolation');
    expect(all).not.toContain('resource_limits');
    for (const capability of all) expect(SANDBOX_CAPABILITIES).toContain(capability);
  });
});

describe('unmetNeeds', () => {
  const needs = policyNeeds({ ...workspaceWrite, privateTmp: true });

  it('leaves the needs a declaration does not cover, in order', () => {
    expect(unmetNeeds(needs, ['write_limits', 'network_off']).map((need) => need.capability)).toEqual([
      'protected_names',
      'private_tmp',
    ]);
    expect(unmetNeeds(needs, [...SANDBOX_CAPABILITIES])).toEqual([]);
  });

  it('treats a missing declaration as enforcing nothing (fail closed)', () => {
    expect(unmetNeeds(needs, undefined)).toEqual(needs);
    expect(unmetNeeds(needs, [])).toEqual(needs);
  });
});
