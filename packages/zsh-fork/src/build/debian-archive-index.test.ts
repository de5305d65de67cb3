import { describe, expect, it } from 'vitest';
import { findSourcePackage, releaseChecksums } from './debian-archive-index.js';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = 'c'.repeat(64);

describe('releaseChecksums', () => {
  it('reads the SHA256 section only, keyed by the path under dists/<suite>/', () => {
    const release = [
      'Origin: Debian',
      'Suite: stable',
      'MD5Sum:',
      ' 754e8e96d1ab9d53e17aca0b5ada2dcf  9491888 main/source/Sources.xz',
      'SHA256:',
      ` ${A} 12729667 main/source/Sources.gz`,
      ` ${B}  9491888 main/source/Sources.xz`,
      '',
    ].join('\n');
    const sums = releaseChecksums(release);
    expect(sums.get('main/source/Sources.gz')).toEqual({
      name: 'main/source/Sources.gz',
      size: 12729667,
      sha256: A,
    });
    expect(sums.get('main/source/Sources.xz')?.sha256).toBe(B);
    expect(sums.size).toBe(2);
  });
});

describe('findSourcePackage', () => {
  it("finds zsh's stanza, not one whose name only starts the same, with its SHA-256 file list", () => {
    const sources = [
      'Package: zsh-antigen',
      'Version: 2.2.3-3',
      'Directory: pool/main/z/zsh-antigen',
      'Checksums-Sha256:',
      ` ${C} 10 zsh-antigen_2.2.3-3.dsc`,
      '',
      'Package: zsh',
      'Binary: zsh, zsh-common',
      'Version: 5.9-4',
      'Directory: pool/main/z/zsh',
      'Files:',
      ' 0123456789abcdef0123456789abcdef 2 zsh_5.9-4.dsc',
      'Checksums-Sha256:',
      ` ${A} 2 zsh_5.9-4.dsc`,
      ` ${B} 3 zsh_5.9.orig.tar.xz`,
      ` ${C} 4 zsh_5.9-4.debian.tar.xz`,
      'Homepage: https://www.zsh.org/',
      '',
    ].join('\n');
    expect(findSourcePackage(sources, 'zsh')).toEqual({
      version: '5.9-4',
      directory: 'pool/main/z/zsh',
      files: [
        { name: 'zsh_5.9-4.dsc', size: 2, sha256: A },
        { name: 'zsh_5.9.orig.tar.xz', size: 3, sha256: B },
        { name: 'zsh_5.9-4.debian.tar.xz', size: 4, sha256: C },
      ],
    });
    expect(findSourcePackage(sources, 'bash')).toBeUndefined();
  });
});
