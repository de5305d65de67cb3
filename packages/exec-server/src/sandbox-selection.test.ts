import {
  type EffectivePolicy,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxProbe,
  UnknownPluginError,
} from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { createSandboxSelection } from './sandbox-selection.js';

function backend(id: string, probe: SandboxProbe): SandboxBackend & { probes: number } {
  const made: SandboxBackend & { probes: number } = {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id,
    platforms: ['linux'],
    probes: 0,
    probe: async () => {
      made.probes++;
      return probe;
    },
    plan: async () => {
      throw new Error('not planned here');
    },
  };
  return made;
}

const readOnly: EffectivePolicy = {
  fileSystem: { kind: 'restricted', entries: [{ path: { type: 'special', value: 'root' }, access: 'read' }] },
  network: 'restricted',
  hostState: { hidden: ['/run/ux'] },
};

describe('createSandboxSelection', () => {
  it('follows the preference and the allow-list, which it ignored before', async () => {
    const bwrap = backend('bwrap', {
      available: true,
      enforces: ['write_limits', 'read_deny', 'network_off'],
    });
    const landlock = backend('landlock', {
      available: true,
      enforces: ['write_limits', 'read_deny', 'network_off'],
    });
    const registry = createSandboxRegistry({ bwrap, landlock });
    const preferred = createSandboxSelection(registry, 'linux', { preference: ['landlock', 'bwrap'] });
    expect(await preferred(readOnly)).toMatchObject({ available: true, backend: { id: 'landlock' } });
    const allowed = createSandboxSelection(registry, 'linux', {
      preference: ['landlock', 'bwrap'],
      allowed: ['bwrap'],
    });
    expect(await allowed(readOnly)).toMatchObject({ available: true, backend: { id: 'bwrap' } });
    expect(() => createSandboxSelection(registry, 'linux', { preference: ['bwrp'] })).toThrow(
      UnknownPluginError,
    );
  });

  it('refuses a policy none of its backends enforces, saying what is missing; probes each backend once', async () => {
    const landlock = backend('landlock', {
      available: true,
      enforces: ['write_limits', 'read_deny', 'network_off'],
    });
    const select = createSandboxSelection(createSandboxRegistry({ landlock }), 'linux');
    expect(await select(readOnly)).toMatchObject({
      available: true,
      enforces: ['write_limits', 'read_deny', 'network_off'],
    });
    const choice = await select({ ...readOnly, network: 'proxied' });
    expect(choice.available).toBe(false);
    expect(!choice.available && choice.reason).toBe(
      'the policy needs network_by_domain, which no usable sandbox backend enforces: landlock does not enforce network_by_domain (the network is allowed by domain, through the proxy)',
    );
    expect(landlock.probes).toBe(1);
  });

  it('says how to get a backend when none is registered', async () => {
    const choice = await createSandboxSelection(createSandboxRegistry({}), 'linux')(readOnly);
    expect(choice).toMatchObject({
      available: false,
      reason: 'no sandbox backend for linux is registered with this exec-server',
    });
  });
});
