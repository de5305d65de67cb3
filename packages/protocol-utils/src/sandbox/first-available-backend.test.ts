import { SANDBOX_SPECIFICATION_VERSION, type SandboxBackend, type SandboxProbe } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { firstAvailableBackend, probeSafely } from './first-available-backend.js';

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

const missing = backend('a', async () => ({ available: false, reason: 'a is missing', fix: 'install a' }));
const broken = backend('b', async () => {
  throw new Error('EIO');
});
const working = backend('c', async () => ({ available: true }));

describe('firstAvailableBackend', () => {
  it('takes the first candidate whose probe passes, in order', async () => {
    expect(await firstAvailableBackend([missing, broken, working])).toEqual({ backend: working });
  });

  it('gives every reason and fix when none can run, a throwing probe included', async () => {
    expect(await firstAvailableBackend([missing, broken])).toEqual({
      failures: [
        { id: 'a', reason: 'a is missing', fix: 'install a' },
        { id: 'b', reason: 'its probe failed: EIO', fix: 'report this to the maintainers of the b backend' },
      ],
    });
    expect(await probeSafely(broken)).toMatchObject({ available: false, reason: 'its probe failed: EIO' });
  });
});
