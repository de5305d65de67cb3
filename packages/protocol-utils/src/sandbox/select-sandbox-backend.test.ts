import type { EffectivePolicy } from '@ux/protocol/core';
import {
  SANDBOX_CAPABILITIES,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxCapability,
  type SandboxProbe,
  SandboxUnavailableError,
  UnknownPluginError,
} from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { createSandboxRegistry } from './sandbox-registry.js';
import {
  checkSandboxBackendIds,
  sandboxCandidates,
  sandboxSelectionError,
  selectSandboxBackend,
} from './select-sandbox-backend.js';

const probed: string[] = [];
function backend(id: string, probe: SandboxProbe, platforms: NodeJS.Platform[] = ['linux']): SandboxBackend {
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id,
    platforms,
    probe: async () => {
      probed.push(id);
      return probe;
    },
    plan: async () => {
      throw new Error('not planned in these tests');
    },
  };
}
const runs = (enforces?: readonly SandboxCapability[]): SandboxProbe => ({
  available: true,
  ...(enforces ? { enforces } : {}),
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
  hostState: { hidden: ['/run/ux'], readOnly: ['/home/me/.ux'] },
};
const proxied: EffectivePolicy = { ...workspaceWrite, network: 'proxied' };

const full = backend('full', runs(SANDBOX_CAPABILITIES));
const noDomains = backend(
  'nodomains',
  runs(['write_limits', 'protected_names', 'read_deny', 'network_off', 'private_tmp']),
);
const silent = backend('silent', runs());
const missing = backend('missing', {
  available: false,
  reason: 'missing is not installed',
  fix: 'install missing',
});
const mac = backend('mac', runs(SANDBOX_CAPABILITIES), ['darwin']);

const registry = createSandboxRegistry({ full, nodomains: noDomains, silent, missing, mac });

describe('sandboxCandidates', () => {
  it('keeps the preferred, allowed backends made for the platform, in preference order', () => {
    const found = sandboxCandidates({
      registry,
      platform: 'linux',
      preference: ['nodomains', 'mac', 'full', 'missing'],
      allowed: ['full', 'nodomains', 'mac'],
    });
    expect(found.candidates.map((b) => b.id)).toEqual(['nodomains', 'full']);
    expect(found.excluded).toEqual([
      { id: 'silent', why: 'not_enabled', reason: 'silent is not enabled in the config (sandbox_backends)' },
      {
        id: 'missing',
        why: 'not_allowed',
        reason: 'missing is not allowed by the managed requirements (allowed_sandbox_backends)',
      },
      { id: 'mac', why: 'platform', reason: 'mac runs only on darwin' },
    ]);
  });

  it('refuses an unknown id in the preference, listing the registered ones; the allow-list may name others', () => {
    expect(() => sandboxCandidates({ registry, platform: 'linux', preference: ['ful'] })).toThrow(
      UnknownPluginError,
    );
    expect(() => sandboxCandidates({ registry, platform: 'linux', preference: ['ful'] })).toThrow(
      /ful.*full, nodomains, silent, missing, mac/,
    );
    expect(
      sandboxCandidates({ registry, platform: 'linux', allowed: ['landlock', 'full'] }).candidates.map(
        (b) => b.id,
      ),
    ).toEqual(['full']);
    expect(() => checkSandboxBackendIds(['full', 'x'], ['full'])).toThrow(/unknown sandbox backend "x"/i);
    expect(() => checkSandboxBackendIds(['full'], ['full'])).not.toThrow();
  });
});

describe('selectSandboxBackend', () => {
  it('takes the first preferred backend that runs and enforces what the policy needs, and probes no further', async () => {
    probed.length = 0;
    const chosen = await selectSandboxBackend({
      registry,
      platform: 'linux',
      preference: ['missing', 'nodomains', 'full'],
      policy: workspaceWrite,
    });
    expect(chosen.ok && chosen.backend.id).toBe('nodomains');
    expect(probed).toEqual(['missing', 'nodomains']);
    expect(chosen.considered.map((c) => [c.id, c.outcome])).toEqual([
      ['missing', 'unavailable'],
      ['nodomains', 'chosen'],
      ['full', 'not_probed'],
    ]);
  });

  it('skips a backend that runs but lacks a guarantee the policy needs (never a downgrade)', async () => {
    const chosen = await selectSandboxBackend({
      registry,
      platform: 'linux',
      preference: ['nodomains', 'full'],
      policy: proxied,
    });
    expect(chosen.ok && chosen.backend.id).toBe('full');
    expect(chosen.considered[0]).toMatchObject({
      id: 'nodomains',
      outcome: 'lacks',
      unmet: [{ capability: 'network_by_domain' }],
    });
  });

  it('refuses a backend that declares nothing, for any sandboxed policy', async () => {
    const refused = await selectSandboxBackend({
      registry,
      platform: 'linux',
      preference: ['silent'],
      policy: { fileSystem: { kind: 'restricted', entries: [] }, network: 'enabled' },
    });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.backend).toBe('silent');
    expect(refused.reason).toContain('silent does not enforce write_limits');
  });

  it('refuses with what is missing and how to get it when no candidate enforces the policy', async () => {
    const refused = await selectSandboxBackend({
      registry,
      platform: 'linux',
      preference: ['nodomains', 'missing'],
      policy: proxied,
    });
    expect(refused.ok).toBe(false);
    if (refused.ok) return;
    expect(refused.reason).toBe(
      'the policy needs network_by_domain, which no usable sandbox backend enforces: nodomains does not enforce network_by_domain (the network is allowed by domain, through the proxy); missing cannot run here: missing is not installed',
    );
    expect(refused.fix).toContain('make missing run (install missing)');
    expect(refused.fix).toContain(
      'enable a backend that enforces network_by_domain (registered here but not in sandbox_backends: full, silent)',
    );
    expect(refused.fix).toContain('--no-network');
    expect(refused.fix).not.toMatch(/danger-full-access|without a sandbox|unsandboxed/);
    const error = sandboxSelectionError(refused);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect(error.message).toContain('network_by_domain');
  });

  it('without a policy takes the first backend that runs; probeAll probes the rest for doctor', async () => {
    probed.length = 0;
    const all = await selectSandboxBackend({
      registry,
      platform: 'linux',
      preference: ['silent', 'full', 'missing'],
      probeAll: true,
    });
    expect(all.ok && all.backend.id).toBe('silent');
    expect(probed).toEqual(['silent', 'full', 'missing']);
    expect(all.considered.map((c) => c.outcome)).toEqual(['chosen', 'usable', 'unavailable']);
  });

  it('says why when nothing can run: one backend by name, several together, none on this platform', async () => {
    const one = await selectSandboxBackend({
      registry,
      platform: 'linux',
      preference: ['missing'],
      policy: workspaceWrite,
    });
    expect(one).toMatchObject({
      ok: false,
      backend: 'missing',
      reason: 'missing is not installed',
      fix: 'install missing',
    });
    const none = await selectSandboxBackend({ registry, platform: 'win32', policy: workspaceWrite });
    expect(none).toMatchObject({ ok: false });
    expect(!none.ok && none.reason).toContain('no registered backend can be used on win32');
    const empty = await selectSandboxBackend({
      registry: createSandboxRegistry({}),
      platform: 'linux',
      policy: workspaceWrite,
    });
    expect(!empty.ok && empty.reason).toContain('no sandbox backend is registered');
  });
});
