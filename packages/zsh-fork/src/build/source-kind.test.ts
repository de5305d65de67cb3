import { describe, expect, it } from 'vitest';
import { sourceKind } from './source-kind.js';

describe('sourceKind', () => {
  it.each([
    ['/src/zsh-5.9', true, 'directory'],
    ['/src/zsh-5.9.tar.xz', true, 'directory'],
    ['/dl/zsh-5.9.tar.xz', false, 'tarball'],
    ['/dl/zsh_5.9.orig.tar.xz', false, 'tarball'],
    ['/dl/zsh-5.9.TAR.GZ', false, 'tarball'],
    ['/dl/zsh-5.9.tgz', false, 'tarball'],
    ['/dl/zsh-5.9.tar.bz2', false, 'tarball'],
    ['/dl/zsh_5.9-4.dsc', false, 'debian-dsc'],
  ] as const)('%s (directory: %s) is a %s', (path, isDirectory, kind) => {
    expect(sourceKind(path, isDirectory)).toBe(kind);
  });

  it.each(['/dl/zsh-5.9.zip', '/dl/zsh', '/dl/zsh-5.9.tar.xz.asc', '/dl/zsh_5.9-4.debian.tar.xz.sig'])(
    'rejects %s',
    (path) => {
      expect(sourceKind(path, false)).toBeUndefined();
    },
  );
});
