import type { EffectivePolicy, LaunchPlan } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { planContradiction } from './plan-contradiction.js';

const plan = (
  fileSystem: 'enforced' | 'advisory' | 'none',
  network: 'enforced' | 'advisory' | 'none',
): LaunchPlan => ({
  argv: ['true'],
  cwd: '/w',
  env: {},
  sandboxType: 'toy',
  enforcement: { fileSystem, network, notes: [] },
});

const workspaceWrite: EffectivePolicy = {
  fileSystem: {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
    ],
  },
  network: 'restricted',
};

describe('planContradiction', () => {
  it('names a plan that enforces nothing the policy needs', () => {
    expect(planContradiction(plan('none', 'none'), workspaceWrite)).toBe(
      'the toy sandbox\'s plan for this command enforces no file-system limits (enforcement.fileSystem = "none"; the policy needs write_limits, protected_names) and no network limits (enforcement.network = "none"; the policy needs network_off), although the backend declares it enforces them',
    );
    expect(planContradiction(plan('enforced', 'none'), workspaceWrite)).toContain('no network limits');
  });

  it('lets enforced and advisory plans run, and a none where the policy limits nothing', () => {
    expect(planContradiction(plan('enforced', 'enforced'), workspaceWrite)).toBeUndefined();
    expect(planContradiction(plan('advisory', 'advisory'), workspaceWrite)).toBeUndefined();
    expect(
      planContradiction(plan('none', 'none'), { fileSystem: { kind: 'unrestricted' }, network: 'enabled' }),
    ).toBeUndefined();
  });
});
