import { SANDBOX_SPECIFICATION_VERSION, type SandboxBackend, UnknownPluginError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { createSandboxRegistry } from './sandbox-registry.js';

function backend(id: string, platforms: NodeJS.Platform[]): SandboxBackend {
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id,
    platforms,
    probe: async () => ({ available: true }),
    plan: async () => {
      throw new Error('not used');
    },
  };
}

describe('createSandboxRegistry', () => {
  it('holds the backends it is given, in order, and filters by platform', () => {
    const registry = createSandboxRegistry({
      bwrap: backend('bwrap', ['linux']),
      seatbelt: backend('seatbelt', ['darwin']),
    });
    expect(registry.ids).toEqual(['bwrap', 'seatbelt']);
    expect(registry.has('bwrap')).toBe(true);
    expect(registry.get('seatbelt').id).toBe('seatbelt');
    expect(registry.forPlatform('linux').map((b) => b.id)).toEqual(['bwrap']);
    expect(registry.forPlatform('win32')).toEqual([]);
  });

  it('throws for an unknown id, listing the available ones', () => {
    const registry = createSandboxRegistry({ bwrap: backend('bwrap', ['linux']) });
    expect(() => registry.get('landlock')).toThrow('unknown sandbox backend "landlock"; available: bwrap');
    try {
      registry.get('landlock');
    } catch (error) {
      expect(UnknownPluginError.isInstance(error)).toBe(true);
    }
  });

  it('refuses a key that differs from the id and a foreign specification version', () => {
    expect(() => createSandboxRegistry({ linux: backend('bwrap', ['linux']) })).toThrow(
      'sandbox backend registered as "linux" has id "bwrap"',
    );
    const old = {
      ...backend('old', ['linux']),
      specificationVersion: 'ux-sandbox-v0',
    } as unknown as SandboxBackend;
    expect(() => createSandboxRegistry({ old })).toThrow(
      'sandbox backend "old" speaks "ux-sandbox-v0", expected "ux-sandbox-v1"',
    );
  });
});
