import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { bearerMatches, checkedDigest, tokenDigest, tokenDigestFromFile } from './capability-token.js';

const SESAME_SHA256 = 'd0c04f4b1951e4aeaaec8223ed2039e542f3aae805a6fa7f6d794e5afff5d272';

describe('capability tokens', () => {
  it('keeps only the SHA-256 and compares bearer tokens against it', () => {
    const digest = tokenDigest('sesame');
    // printf %s sesame | sha256sum
    expect(digest).toBe(SESAME_SHA256);
    expect(digest).toMatch(/^[0-9a-f]{64}$/);
    expect(bearerMatches('Bearer sesame', digest)).toBe(true);
    expect(bearerMatches('Bearer sesame2', digest)).toBe(false);
    expect(bearerMatches('sesame', digest)).toBe(false);
    expect(bearerMatches(undefined, digest)).toBe(false);
  });

  it('reads a token file, trimmed, and refuses empty, relative or missing ones', () => {
    const dir = tempDir('ux-token-');
    writeFileSync(join(dir, 'token'), '  sesame\n');
    expect(tokenDigestFromFile(join(dir, 'token'))).toBe(tokenDigest('sesame'));
    writeFileSync(join(dir, 'empty'), '\n');
    expect(() => tokenDigestFromFile(join(dir, 'empty'))).toThrow('is empty');
    expect(() => tokenDigestFromFile('token')).toThrow('must be an absolute path');
    expect(() => tokenDigestFromFile(join(dir, 'missing'))).toThrow('cannot read the token file');
  });

  it('checks a digest given on the command line', () => {
    expect(checkedDigest('A'.repeat(64))).toBe('a'.repeat(64));
    expect(() => checkedDigest('abc')).toThrow('64 hexadecimal digits');
  });
});
