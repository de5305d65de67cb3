import { type EffectivePolicy, SandboxUnavailableError } from '@ux/protocol';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { fakeBackend } from '../../test/fakes.js';
import { createSandboxSelector } from './sandbox-selector.js';

const unavailable = (reason: string, fix: string) => ({ available: false as const, reason, fix });

describe('createSandboxSelector', () => {
  it('keeps registered, enabled, allowed backends of this platform, in the enabled order', () => {
    const registry = createSandboxRegistry({
      bwrap: fakeBackend('bwrap'),
      landlock: fakeBackend('landlock'),
      seatbelt: fakeBackend('seatbelt', { platforms: ['darwin'] }),
      extra: fakeBackend('extra'),
    });
    const selector = createSandboxSelector({
      sandboxRegistry: registry,
      platform: 'linux',
      enabledBackends: ['landlock', 'bwrap', 'seatbelt'],
      allowedBackends: ['bwrap', 'landlock', 'extra'],
    });
    expect(selector.candidates.map((backend) => backend.id)).toEqual(['landlock', 'bwrap']);
  });

  it('picks the first available candidate and probes each once', async () => {
    const first = fakeBackend('first', {
      probe: unavailable('no userns', 'sysctl -w kernel.unprivileged_userns_clone=1'),
    });
    const second = fakeBackend('second');
    const third = fakeBackend('third');
    const selector = createSandboxSelector({
      sandboxRegistry: createSandboxRegistry({ first, second, third }),
      platform: 'linux',
    });
    expect((await selector.select()).id).toBe('second');
    expect((await selector.select()).id).toBe('second');
    expect([first.probes, second.probes, third.probes]).toEqual([1, 1, 0]);
  });

  it('fails closed with every reason and fix when no candidate can run', async () => {
    const selector = createSandboxSelector({
      sandboxRegistry: createSandboxRegistry({
        bwrap: fakeBackend('bwrap', {
          probe: unavailable('bwrap is not installed', 'apt-get install bubblewrap'),
        }),
        landlock: fakeBackend('landlock', {
          probe: async () => {
            throw new Error('EIO');
          },
        }),
      }),
      platform: 'linux',
    });
    const error = await selector.select().catch((caught: unknown) => caught);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      backend: undefined,
      reason:
        'no sandbox backend can run here: bwrap: bwrap is not installed; landlock: its probe failed: EIO',
      fix: 'bwrap: apt-get install bubblewrap; landlock: report this to the maintainers of the landlock backend',
    });
  });

  it('says why each registered backend was left out', async () => {
    const selector = createSandboxSelector({
      sandboxRegistry: createSandboxRegistry({
        seatbelt: fakeBackend('seatbelt', { platforms: ['darwin'] }),
        bwrap: fakeBackend('bwrap'),
        landlock: fakeBackend('landlock'),
      }),
      platform: 'linux',
      enabledBackends: ['landlock'],
      allowedBackends: ['bwrap'],
    });
    await expect(selector.select()).rejects.toMatchObject({
      reason:
        'the policy needs a sandbox, but no registered backend can be used on linux (seatbelt runs only on darwin; bwrap is not enabled in the config (sandbox_backends); landlock is not allowed by the managed requirements (allowed_sandbox_backends))',
      fix: 'enable (sandbox_backends) and allow (allowed_sandbox_backends) a backend made for linux',
    });
  });

  it('says how to register one when none is', async () => {
    const selector = createSandboxSelector({ sandboxRegistry: createSandboxRegistry({}), platform: 'linux' });
    await expect(selector.select()).rejects.toThrow(
      'sandbox unavailable: the policy needs a sandbox, but no sandbox backend is registered for linux; register one (the ux CLI registers the shipped backends; an embedder passes createSandboxRegistry({ bwrap: createBwrapSandbox() }))',
    );
  });

  it('says which preferred backend could not run, when a later one is chosen', async () => {
    const bwrap = fakeBackend('bwrap', {
      probe: unavailable('bwrap: No permissions to create a new namespace', 'fix it'),
    });
    const landlock = fakeBackend('landlock', { probe: { available: true, enforces: ['write_limits'] } });
    const selector = createSandboxSelector({
      sandboxRegistry: createSandboxRegistry({ bwrap, landlock }),
      platform: 'linux',
    });
    const policy: EffectivePolicy = {
      fileSystem: {
        kind: 'restricted',
        entries: [{ path: { type: 'special', value: 'root' }, access: 'read' }],
      },
      network: 'enabled',
    };
    expect(await selector.choose(policy)).toMatchObject({
      backend: { id: 'landlock' },
      passedOver: [
        { backend: 'bwrap', reason: 'cannot run here: bwrap: No permissions to create a new namespace' },
      ],
    });
  });

  it('skips a preferred backend that lacks what the policy needs, and refuses when none has it', async () => {
    const policy: EffectivePolicy = {
      fileSystem: {
        kind: 'restricted',
        entries: [{ path: { type: 'special', value: 'root' }, access: 'read' }],
      },
      network: 'proxied',
    };
    const landlock = fakeBackend('landlock', {
      probe: { available: true, enforces: ['write_limits', 'read_deny', 'network_off'] },
    });
    const bwrap = fakeBackend('bwrap');
    const both = createSandboxSelector({
      sandboxRegistry: createSandboxRegistry({ bwrap, landlock }),
      platform: 'linux',
      enabledBackends: ['landlock', 'bwrap'],
    });
    expect((await both.select({ ...policy, network: 'restricted' })).id).toBe('landlock');
    expect(await both.choose(policy)).toMatchObject({
      backend: { id: 'bwrap' },
      passedOver: [{ backend: 'landlock', reason: 'does not enforce network_by_domain' }],
    });
    expect((await both.choose({ ...policy, network: 'restricted' })).passedOver).toEqual([]);
    expect([landlock.probes, bwrap.probes]).toEqual([1, 1]);

    const alone = createSandboxSelector({
      sandboxRegistry: createSandboxRegistry({ landlock }),
      platform: 'linux',
    });
    const error = await alone.select(policy).catch((caught: unknown) => caught);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      backend: 'landlock',
      reason:
        'the policy needs network_by_domain, which no usable sandbox backend enforces: landlock does not enforce network_by_domain (the network is allowed by domain, through the proxy)',
    });
    expect((error as Error).message).toContain('--no-network');
  });
});
