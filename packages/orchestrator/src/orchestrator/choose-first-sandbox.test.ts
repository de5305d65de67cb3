import type { EffectivePolicy } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { DENY_READ, FULL_ACCESS, fakeBackend, WORKSPACE_WRITE } from '../../test/fakes.js';
import type { ApprovalRequirement } from '../policy/approval-requirement.js';
import { chooseFirstSandbox, type FirstSandboxInput } from './choose-first-sandbox.js';

const ask: ApprovalRequirement = { type: 'needs_approval', policyReason: 'why' };
const ruleAllows: ApprovalRequirement = { type: 'skip', bypassSandbox: true };

function input(overrides: Partial<FirstSandboxInput> = {}) {
  const picked: EffectivePolicy[] = [];
  return {
    picked,
    input: {
      policy: WORKSPACE_WRITE,
      request: { cwd: '/work/repo' },
      requirement: ask,
      managedNetwork: false,
      pick: async (policy: EffectivePolicy) => {
        picked.push(policy);
        return { backend: fakeBackend('bwrap') };
      },
      ...overrides,
    } satisfies FirstSandboxInput,
  };
}

describe('chooseFirstSandbox', () => {
  it('sandboxes a restricted policy with the picked backend and the session policy', async () => {
    const { input: first, picked } = input();
    const sandbox = await chooseFirstSandbox(first);
    expect(sandbox?.backend.id).toBe('bwrap');
    expect(sandbox?.policy).toBe(WORKSPACE_WRITE);
    expect(picked).toEqual([WORKSPACE_WRITE]);
  });

  it('runs unsandboxed, picking nothing, for an allow rule, an escalation, or full access', async () => {
    for (const overrides of [
      { requirement: ruleAllows },
      { request: { cwd: '/work/repo', sandboxPermissions: 'require_escalated' as const } },
      { policy: FULL_ACCESS },
    ]) {
      const { input: first, picked } = input(overrides);
      expect(await chooseFirstSandbox(first)).toBeNull();
      expect(picked).toEqual([]);
    }
  });

  it('keeps the sandbox under deny-read even for an approved escalation', async () => {
    const { input: first } = input({
      policy: DENY_READ,
      request: { cwd: '/work/repo', sandboxPermissions: 'require_escalated' },
    });
    expect((await chooseFirstSandbox(first))?.policy).toBe(DENY_READ);
  });

  it('sandboxes even full access under a managed network proxy', async () => {
    const { input: first } = input({ policy: FULL_ACCESS, managedNetwork: true });
    expect(await chooseFirstSandbox(first)).not.toBeNull();
  });

  it('widens the attempt policy by the approved additional permissions', async () => {
    const { input: first, picked } = input({
      request: {
        cwd: '/work/repo',
        sandboxPermissions: 'with_additional_permissions',
        additionalPermissions: { network: { enabled: true } },
      },
    });
    const sandbox = await chooseFirstSandbox(first);
    expect(sandbox?.policy.network).toBe('enabled');
    expect(picked[0]?.network).toBe('enabled');
  });
});
