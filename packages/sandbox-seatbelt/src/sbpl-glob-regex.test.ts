import { globToRegExp } from '@ux/protocol-utils';
import { describe, expect, it } from 'vitest';
import { sbplGlobRegex, splitGlob } from './sbpl-glob-regex.js';

/** The SBPL regex must deny exactly what the policy's glob covers: a match and everything below it. */
function covered(pattern: string, path: string): boolean {
  const regexp = globToRegExp(pattern);
  for (let current = path; ; current = current.slice(0, current.lastIndexOf('/')) || '/') {
    if (regexp.test(current)) return true;
    if (current === '/') return false;
  }
}

function sbplMatches(pattern: string, path: string): boolean {
  const { base, rest } = splitGlob(pattern);
  const depth = base.split('/').filter(Boolean).length;
  const underBase = base === '/' || path === base || path.startsWith(`${base}/`);
  // The profile pairs the regex with (subpath base); SBPL's syntax here is also valid JavaScript syntax.
  return underBase && new RegExp(sbplGlobRegex(rest, depth)).test(path);
}

describe('splitGlob', () => {
  it('cuts at the first segment with a glob character', () => {
    expect(splitGlob('/w/**/*.env')).toEqual({ base: '/w', rest: '**/*.env' });
    expect(splitGlob('/w/keys/[!p]*.pem')).toEqual({ base: '/w/keys', rest: '[!p]*.pem' });
    expect(splitGlob('/**/id_rsa')).toEqual({ base: '/', rest: '**/id_rsa' });
    expect(splitGlob('/w/a\\*b/c')).toEqual({ base: '/w', rest: 'a\\*b/c' });
    expect(splitGlob('/w/plain/file')).toEqual({ base: '/w/plain', rest: 'file' });
  });
});

describe('sbplGlobRegex', () => {
  it('counts the base components instead of spelling the base path', () => {
    expect(sbplGlobRegex('**/*.env', 2)).toBe('^/[^/]+/[^/]+/([^/]*/)*[^/]*\\.env(/.*)?$');
    expect(sbplGlobRegex('[!p]*.pem', 1)).toBe('^/[^/]+/[^/p][^/]*\\.pem(/.*)?$');
    expect(sbplGlobRegex('cred?', 0)).toBe('^/cred[^/](/.*)?$');
    expect(sbplGlobRegex('a+b(c)|d', 0)).toBe('^/a\\+b\\(c\\)\\|d(/.*)?$');
  });

  it('never writes a quote, widening it to one non-slash character instead', () => {
    const regex = sbplGlobRegex('secret "x".txt', 1);
    expect(regex).not.toContain('"');
    expect(regex).toBe('^/[^/]+/secret [^/]x[^/]\\.txt(/.*)?$');
    expect(sbplGlobRegex('[a"]', 0)).toBe('^/[^/](/.*)?$');
  });

  it('covers the same paths as the policy glob, subtrees included', () => {
    const cases: [string, string[]][] = [
      [
        '/w/**/*.env',
        ['/w/.env', '/w/a/b/prod.env', '/w/prod.env/inner', '/w/env', '/w/a.envx', '/x/a.env', '/w'],
      ],
      ['/w/keys/[!p]*.pem', ['/w/keys/a.pem', '/w/keys/p.pem', '/w/keys/sub/a.pem', '/w/keys/ab.pem/x']],
      ['/Users/me/.aws/cred?', ['/Users/me/.aws/creds', '/Users/me/.aws/cred', '/Users/me/.aws/credss']],
      [
        '/Users/me/*/token',
        ['/Users/me/a/token', '/Users/me/a/b/token', '/Users/me/token', '/Users/me/a/token/x'],
      ],
      ['/**/id_*', ['/id_rsa', '/home/u/.ssh/id_ed25519', '/home/u/.ssh/known_hosts']],
      ['/w/a.b/[0-9]?x', ['/w/a.b/1zx', '/w/aXb/1zx', '/w/a.b/zzx']],
      ['/w/日本/*.txt', ['/w/日本/a.txt', '/w/日本x/a.txt']],
    ];
    for (const [pattern, paths] of cases) {
      for (const path of paths) {
        expect(sbplMatches(pattern, path), `${pattern} vs ${path}`).toBe(covered(pattern, path));
      }
    }
  });
});
