/**
 * Pure readers of a Debian archive's indices: the checksums a suite's signed `InRelease` lists, and a
 * source package's stanza in `Sources`. They let ux download a source package and check every file
 * against the signed index, as `apt-get source` does, without touching apt's configuration.
 */

/** A file an index lists, with the size and SHA-256 it must have. */
export interface IndexedFile {
  name: string;
  size: number;
  sha256: string;
}

/** The `SHA256:` section of a Release file: path (relative to `dists/<suite>/`) → size and hash. */
export function releaseChecksums(release: string): Map<string, IndexedFile> {
  return new Map(sha256Lines(fieldBlock(paragraphs(release)[0] ?? [], 'SHA256')).map((f) => [f.name, f]));
}

/** A source package as `Sources` lists it. */
export interface SourcePackage {
  version: string;
  /** Its directory in the archive: `pool/main/z/zsh`. */
  directory: string;
  /** The `.dsc` and the tarballs it names. */
  files: IndexedFile[];
}

/** The first stanza of `name` in a `Sources` index (a suite lists one version of a package). */
export function findSourcePackage(sources: string, name: string): SourcePackage | undefined {
  for (const stanza of paragraphs(sources)) {
    if (fieldValue(stanza, 'Package') !== name) continue;
    const version = fieldValue(stanza, 'Version');
    const directory = fieldValue(stanza, 'Directory');
    const files = sha256Lines(fieldBlock(stanza, 'Checksums-Sha256'));
    if (version && directory && files.length > 0) return { version, directory, files };
  }
  return undefined;
}

function paragraphs(text: string): string[][] {
  return text
    .replace(/\r\n/g, '\n')
    .split(/\n[ \t]*\n/)
    .map((block) => block.split('\n').filter((line) => line !== ''))
    .filter((lines) => lines.length > 0);
}

function fieldValue(stanza: readonly string[], name: string): string | undefined {
  const prefix = `${name.toLowerCase()}:`;
  const line = stanza.find((candidate) => candidate.toLowerCase().startsWith(prefix));
  return line?.slice(prefix.length).trim();
}

/** The continuation lines of a multi-line field (`SHA256:`, `Checksums-Sha256:`). */
function fieldBlock(stanza: readonly string[], name: string): string[] {
  const prefix = `${name.toLowerCase()}:`;
  const start = stanza.findIndex((line) => line.toLowerCase().startsWith(prefix));
  if (start < 0) return [];
  const block: string[] = [];
  for (const line of stanza.slice(start + 1)) {
    if (!/^[ \t]/.test(line)) break;
    block.push(line.trim());
  }
  return block;
}

function sha256Lines(lines: readonly string[]): IndexedFile[] {
  const files: IndexedFile[] = [];
  for (const line of lines) {
    const match = /^([0-9a-f]{64})\s+(\d+)\s+(\S+)$/.exec(line);
    if (match) files.push({ sha256: match[1]!, size: Number(match[2]), name: match[3]! });
  }
  return files;
}
