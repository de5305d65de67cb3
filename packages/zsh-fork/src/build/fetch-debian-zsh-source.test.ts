import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import {
  describeZshSourceFetch,
  fetchDebianZshSource,
  findDsc,
  planZshSourceFetch,
} from './fetch-debian-zsh-source.js';
import { ZshForkBuildError } from './zsh-fork-build-error.js';

const MIRROR = 'http://mirror.example/debian';
const KEYRING = '/usr/share/keyrings/debian-archive-keyring.gpg';
const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

/** An apt directory like Debian 12's image: one deb822 file, no deb-src. */
function aptDir(): string {
  const dir = tempDir('ux-apt-');
  mkdirSync(join(dir, 'sources.list.d'));
  writeFileSync(
    join(dir, 'sources.list.d', 'debian.sources'),
    `Types: deb\nURIs: ${MIRROR}\nSuites: bookworm bookworm-updates\nComponents: main\nSigned-By: ${KEYRING}\n`,
  );
  return dir;
}

/** Every file under `dir` with its contents, to show nothing there changed. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (entry.isFile())
      files[join(entry.parentPath, entry.name)] = readFileSync(join(entry.parentPath, entry.name), 'utf8');
  return files;
}

/** A mirror holding zsh in bookworm/main; `tamper` serves other bytes for one file than the index says. */
function fakeArchive(tamper?: string) {
  const files: Record<string, Buffer> = {
    'zsh_5.9-4.dsc': Buffer.from('Format: 3.0 (quilt)\nSource: zsh\n'),
    'zsh_5.9.orig.tar.xz': Buffer.from('orig tarball'),
    'zsh_5.9-4.debian.tar.xz': Buffer.from('debian tarball'),
  };
  const sources = gzipSync(
    [
      'Package: zsh',
      'Version: 5.9-4',
      'Directory: pool/main/z/zsh',
      'Checksums-Sha256:',
      ...Object.entries(files).map(([name, data]) => ` ${sha256(data)} ${data.length} ${name}`),
      '',
    ].join('\n'),
  );
  const release = `Suite: stable\nSHA256:\n ${sha256(sources)} ${sources.length} main/source/Sources.gz\n`;
  const served: Record<string, Buffer> = {
    [`${MIRROR}/dists/bookworm/InRelease`]: Buffer.from(`-----BEGIN PGP SIGNED MESSAGE-----\n${release}`),
    [`${MIRROR}/dists/bookworm/main/source/Sources.gz`]: sources,
    ...Object.fromEntries(
      Object.entries(files).map(([name, data]) => [
        `${MIRROR}/pool/main/z/zsh/${name}`,
        name === tamper ? Buffer.from('something else') : data,
      ]),
    ),
  };
  const requested: string[] = [];
  const keyrings: string[][] = [];
  return {
    files,
    requested,
    keyrings,
    fetch: async (url: string) => {
      requested.push(url);
      const body = served[url];
      return body ? new Response(new Uint8Array(body)) : new Response('not found', { status: 404 });
    },
    verifyRelease: async (inRelease: Buffer, used: readonly string[]) => {
      keyrings.push([...used]);
      return inRelease.toString('utf8').replace(/^-----BEGIN PGP SIGNED MESSAGE-----\n/, '');
    },
  };
}

describe('fetchDebianZshSource', () => {
  it("downloads the source package from the system's mirror, checked, and changes nothing in apt's directory", async () => {
    const apt = aptDir();
    const before = snapshot(apt);
    const downloadDir = join(tempDir(), 'zsh-src');
    const archive = fakeArchive();
    const dsc = await fetchDebianZshSource({ downloadDir, aptDir: apt, ...archive });
    expect(dsc).toBe(join(downloadDir, 'zsh_5.9-4.dsc'));
    for (const [name, data] of Object.entries(archive.files))
      expect(readFileSync(join(downloadDir, name))).toEqual(data);
    // Only the package's files are left: no temp directory.
    expect(readdirSync(downloadDir).sort()).toEqual(Object.keys(archive.files).sort());
    expect(snapshot(apt)).toEqual(before);
    expect(archive.keyrings).toEqual([[KEYRING]]);
    // Found in the first suite: the second is never asked.
    expect(archive.requested.some((url) => url.includes('bookworm-updates'))).toBe(false);

    // Found again next time without a request.
    const again = fakeArchive();
    expect(await fetchDebianZshSource({ downloadDir, aptDir: apt, ...again })).toBe(dsc);
    expect(again.requested).toEqual([]);
  });

  it('refuses a file whose checksum is not the signed one, and leaves no .dsc behind', async () => {
    const downloadDir = join(tempDir(), 'zsh-src');
    const archive = fakeArchive('zsh_5.9.orig.tar.xz');
    const error = await fetchDebianZshSource({ downloadDir, aptDir: aptDir(), ...archive }).catch((e) => e);
    expect(ZshForkBuildError.isInstance(error)).toBe(true);
    expect(error.reason).toBe('source_fetch_failed');
    expect(error.message).toContain('zsh_5.9.orig.tar.xz does not match the signed index');
    expect(findDsc(downloadDir)).toBeUndefined();
    expect(readdirSync(downloadDir)).toEqual([]);
  });

  it('says what it will do before doing it, naming the mirror, the keyring and the directory', () => {
    const plan = planZshSourceFetch({ downloadDir: '/cache/zsh-src', aptDir: aptDir() });
    const text = describeZshSourceFetch(plan).join('\n');
    expect(text).toContain(MIRROR);
    expect(text).toContain(KEYRING);
    expect(text).toContain('/cache/zsh-src');
    expect(text).toContain('no apt source is added, apt-get is not run');
  });

  it('fails with a fix where apt lists no mirror', () => {
    const apt = tempDir('ux-apt-');
    expect(() => planZshSourceFetch({ downloadDir: '/x', aptDir: apt })).toThrow(/no HTTP mirror under/);
  });
});
