import type { EffectivePolicy } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { withHostState } from './with-host-state.js';

const policy: EffectivePolicy = {
  fileSystem: { kind: 'restricted', entries: [{ path: { type: 'special', value: 'root' }, access: 'read' }] },
  network: 'restricted',
  hostState: { hidden: ['/run/user/1000/ux'] },
};

describe('withHostState', () => {
  it("adds this host's ux files to a client's policy, keeping what it had, each once", () => {
    expect(
      withHostState(policy, { readOnly: ['/home/u/.ux'], hidden: ['/run/user/1000/ux', '/tmp/ux-1000'] }),
    ).toEqual({
      ...policy,
      hostState: { readOnly: ['/home/u/.ux'], hidden: ['/run/user/1000/ux', '/tmp/ux-1000'] },
    });
  });

  it('leaves the policy as it is without host state', () => {
    expect(withHostState(policy, undefined)).toBe(policy);
  });
});
