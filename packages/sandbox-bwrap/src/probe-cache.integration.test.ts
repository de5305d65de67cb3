// The probe cache with the real bwrap probe behind it (the pure read/write rules are in probe-cache.test.ts).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BWRAP_ENFORCES, createBwrapSandbox } from './create-bwrap-sandbox.js';

describe('the bwrap probe cache', () => {
  it('spares the next backend the probe: it takes the remembered features', async () => {
    const dir = tempDir('ux-probe-cache-');
    const cache = join(dir, 'real', 'bwrap-probe.json');
    const firstBackend = createBwrapSandbox({ probeCacheFile: cache });
    onTestFinished(() => firstBackend.close());
    const first = await firstBackend.probe();
    expect(first.available).toBe(true);
    // Flip a remembered feature (keeping the key): a backend that reads the cache reports the flip.
    const entry = JSON.parse(readFileSync(cache, 'utf8'));
    entry.probe.argv0 = !entry.probe.argv0;
    writeFileSync(cache, JSON.stringify(entry), { mode: 0o600 });
    const secondBackend = createBwrapSandbox({ probeCacheFile: cache });
    onTestFinished(() => secondBackend.close());
    const second = await secondBackend.probe();
    expect(second.available && second.details?.argv0).toBe(entry.probe.argv0);
    // What it enforces is declared by both, cached or not: everything but resource limits.
    expect(first.available && first.enforces).toEqual(BWRAP_ENFORCES);
    expect(second.available && second.enforces).toEqual(BWRAP_ENFORCES);
    expect(BWRAP_ENFORCES).not.toContain('resource_limits');
  });
});
