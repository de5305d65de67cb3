import { chmodSync, copyFileSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { readProbeCache, writeProbeCache } from './probe-cache.js';

const PROBE = { version: '0.8.0', disableUserns: true, argv0: false };

function fakeBinary() {
  const dir = tempDir('ux-probe-cache-');
  const binary = join(dir, 'bwrap');
  copyFileSync('/bin/true', binary);
  return { dir, binary, cache: join(dir, 'cache', 'bwrap-probe.json') };
}

describe('the bwrap probe cache', () => {
  it('returns what was written, for the same binary', () => {
    const { binary, cache } = fakeBinary();
    writeProbeCache(cache, binary, PROBE);
    expect(readProbeCache(cache, binary)).toEqual(PROBE);
    expect(readFileSync(cache, 'utf8')).toContain('"probe"');
  });

  it('is not trusted for another binary, or once the binary changed', () => {
    const { dir, binary, cache } = fakeBinary();
    writeProbeCache(cache, binary, PROBE);
    const other = join(dir, 'other-bwrap');
    copyFileSync('/bin/true', other);
    expect(readProbeCache(cache, other)).toBeUndefined();
    utimesSync(binary, new Date(), new Date(Date.now() + 60_000));
    expect(readProbeCache(cache, binary)).toBeUndefined();
  });

  it('ignores a file others can write, and a malformed one', () => {
    const { binary, cache } = fakeBinary();
    writeProbeCache(cache, binary, PROBE);
    chmodSync(cache, 0o666);
    expect(readProbeCache(cache, binary)).toBeUndefined();
    chmodSync(cache, 0o600);
    writeFileSync(cache, '{not json');
    expect(readProbeCache(cache, binary)).toBeUndefined();
  });
});
