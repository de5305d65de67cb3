import { SANDBOX_SPECIFICATION_VERSION, type SandboxBackend, type SandboxProbe } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { probeSafely } from './probe-safely.js';

function backend(id: string, probe: () => Promise<SandboxProbe>): SandboxBackend {
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id,
    platforms: ['linux'],
    probe,
    plan: async () => {
      throw new Error('not planned in these tests');
    },
  };
}

describe('probeSafely', () => {
  it("gives a probe's own answer", async () => {
    const missing = backend('a', async () => ({
      available: false,
      reason: 'a is missing',
      fix: 'install a',
    }));
    expect(await probeSafely(missing)).toEqual({
      available: false,
      reason: 'a is missing',
      fix: 'install a',
    });
    expect(await probeSafely(backend('c', async () => ({ available: true })))).toEqual({ available: true });
  });

  it('turns a probe that throws into a reason and a fix', async () => {
    const broken = backend('b', async () => {
      throw new Error('EIO');
    });
    expect(await probeSafely(broken)).toEqual({
      available: false,
      reason: 'its probe failed: EIO',
      fix: 'report this to the maintainers of the b backend',
    });
  });
});
