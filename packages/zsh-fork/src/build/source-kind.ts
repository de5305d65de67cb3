/** What `--source` names: an unpacked zsh tree, a release tarball, or a Debian source package. */
export type ZshSourceKind = 'directory' | 'tarball' | 'debian-dsc';

const TARBALL = /\.(tar\.xz|txz|tar\.gz|tgz|tar\.bz2|tbz2?|tar)$/i;

/**
 * The kind of a source path from its name and whether it is a directory; undefined when it is none
 * of them (the caller says which kinds are accepted). Pure: the caller does the `stat`.
 */
export function sourceKind(path: string, isDirectory: boolean): ZshSourceKind | undefined {
  if (isDirectory) return 'directory';
  if (TARBALL.test(path)) return 'tarball';
  if (/\.dsc$/i.test(path)) return 'debian-dsc';
  return undefined;
}

/** The accepted kinds, for error messages. */
export const SOURCE_KINDS_TEXT =
  'a zsh 5.9 source directory, a release tarball (.tar.xz, .tar.gz, .tar.bz2) or a Debian .dsc';
