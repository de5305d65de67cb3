import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { findSourcePackage, type IndexedFile, releaseChecksums } from './debian-archive-index.js';
import { type AptSourcesFile, type DebianMirror, debianMirrors } from './debian-mirrors.js';
import { runStep } from './run-step.js';
import { passSourceFix } from './zsh-download-hint.js';
import { ZshForkBuildError } from './zsh-fork-build-error.js';

/** What fetching zsh's source will do, to be shown before it is done. */
export interface ZshSourceFetchPlan {
  /** Where the source package is downloaded (and found again next time). */
  downloadDir: string;
  /** The mirrors of the system's `deb` entries, tried in order. */
  mirrors: DebianMirror[];
  /** Where they were read from (read only). */
  aptDir: string;
}

export interface PlanZshSourceFetchOptions {
  downloadDir: string;
  /** apt's configuration directory, only read; tests point it elsewhere. */
  aptDir?: string;
}

export interface FetchDebianZshSourceOptions extends PlanZshSourceFetchOptions {
  onLine?: (line: string) => void;
  signal?: AbortSignal;
  /** The HTTP client; tests hand in a fake archive. */
  fetch?: (url: string, init: { signal?: AbortSignal }) => Promise<Response>;
  /** Checks an `InRelease` signature and returns the signed text; default `gpgv` with the mirror's keyring. */
  verifyRelease?: (inRelease: Buffer, keyrings: readonly string[], workDir: string) => Promise<string>;
}

/**
 * Where zsh's Debian source would come from: the mirrors the system already installs from (apt's
 * `deb` entries, read and never changed). Throws `ZshForkBuildError` (`source_unavailable`) where
 * there is none: not Debian, or no HTTP mirror listed.
 */
export function planZshSourceFetch(options: PlanZshSourceFetchOptions): ZshSourceFetchPlan {
  const aptDir = options.aptDir ?? '/etc/apt';
  if (!existsSync(aptDir))
    throw new ZshForkBuildError({
      reason: 'source_unavailable',
      problem: `no zsh source given, and this is not a Debian system whose mirror (in ${aptDir}) could provide it`,
      fix: passSourceFix(),
    });
  const mirrors = debianMirrors(readAptSources(aptDir));
  if (mirrors.length === 0)
    throw new ZshForkBuildError({
      reason: 'source_unavailable',
      problem: `no zsh source given, and apt lists no HTTP mirror under ${aptDir} to download it from`,
      fix: passSourceFix(),
    });
  return { downloadDir: options.downloadDir, mirrors, aptDir };
}

/** The plan in words, one line each, for a person to read before anything is downloaded. */
export function describeZshSourceFetch(plan: ZshSourceFetchPlan): string[] {
  const first = plan.mirrors[0]!;
  return [
    `download Debian's zsh source package (zsh_*.dsc, the orig tarball and the debian tarball) from ${first.uri}` +
      `${plan.mirrors.length > 1 ? ` (or the next of the ${plan.mirrors.length} mirrors in ${plan.aptDir})` : ''}`,
    `check the suite's InRelease signature with gpgv against ${first.signedBy ?? `the keyrings in ${plan.aptDir}`}, then each file's size and SHA-256 against the signed index`,
    `save the files in ${plan.downloadDir}`,
    'change nothing else: no apt source is added, apt-get is not run, nothing is installed',
  ];
}

/**
 * Downloads Debian's zsh source package straight from the system's mirror into `downloadDir` and
 * returns its `.dsc`; a `.dsc` already there is reused. The suite's `InRelease` is checked with gpgv
 * against the keyring the apt entry trusts, `Sources.gz` against the signed checksums, and the
 * package's files against `Sources`: the same chain of trust as `apt-get source`, without a `deb-src`
 * entry or `apt-get update`. apt's configuration is only read.
 */
export async function fetchDebianZshSource(options: FetchDebianZshSourceOptions): Promise<string> {
  const existing = findDsc(options.downloadDir);
  if (existing) {
    options.onLine?.(`using the zsh source package already downloaded: ${existing}`);
    return existing;
  }
  const plan = planZshSourceFetch(options);
  const get = options.fetch ?? ((url, init) => fetch(url, init));
  const verify = options.verifyRelease ?? ((text, keyrings, dir) => gpgvVerify(text, keyrings, dir, options));
  mkdirSync(options.downloadDir, { recursive: true });
  const work = join(options.downloadDir, `.partial-${randomBytes(4).toString('hex')}`);
  mkdirSync(work);
  const download = async (url: string): Promise<Buffer> => {
    options.onLine?.(`GET ${url}`);
    let response: Response;
    try {
      response = await get(url, { signal: options.signal });
    } catch (error) {
      throwIfAborted(options.signal);
      throw fetchFailed(`could not download ${url}: ${(error as Error).message}`, error);
    }
    if (!response.ok) throw fetchFailed(`could not download ${url}: HTTP ${response.status}`);
    return Buffer.from(await response.arrayBuffer());
  };
  const tried: string[] = [];
  try {
    for (const mirror of plan.mirrors) {
      for (const suite of mirror.suites) {
        const release = await verify(
          await download(`${mirror.uri}/dists/${suite}/InRelease`),
          mirror.signedBy ? [mirror.signedBy] : trustedKeyrings(plan.aptDir),
          work,
        );
        const checksums = releaseChecksums(release);
        for (const component of mirror.components) {
          const indexed = checksums.get(`${component}/source/Sources.gz`);
          tried.push(`${mirror.uri} ${suite}/${component}`);
          if (!indexed) continue;
          const index = checked(
            await download(`${mirror.uri}/dists/${suite}/${component}/source/Sources.gz`),
            indexed,
          );
          const zsh = findSourcePackage(gunzipSync(index).toString('utf8'), 'zsh');
          if (!zsh) continue;
          options.onLine?.(`found zsh ${zsh.version} in ${mirror.uri} ${suite}/${component}`);
          // The .dsc last: its presence is what marks a complete download.
          const files = [...zsh.files].sort(
            (a, b) => Number(a.name.endsWith('.dsc')) - Number(b.name.endsWith('.dsc')),
          );
          for (const file of files) {
            if (!/^[\w.+~-]+$/.test(file.name))
              throw fetchFailed(`Sources names an unexpected file "${file.name}"`);
            const data = checked(await download(`${mirror.uri}/${zsh.directory}/${file.name}`), file);
            writeFileSync(join(work, file.name), data);
          }
          for (const file of files) renameSync(join(work, file.name), join(options.downloadDir, file.name));
          return join(options.downloadDir, files[files.length - 1]!.name);
        }
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  throw new ZshForkBuildError({
    reason: 'source_fetch_failed',
    problem: `no zsh source package in the mirrors apt lists (${tried.join(', ') || 'none tried'})`,
    fix: passSourceFix(),
  });
}

/** The data, when its size and SHA-256 are the ones the signed index gives; else a fetch failure. */
function checked(data: Buffer, expected: IndexedFile): Buffer {
  const sha256 = createHash('sha256').update(data).digest('hex');
  if (data.length !== expected.size || sha256 !== expected.sha256)
    throw fetchFailed(
      `${expected.name} does not match the signed index (size ${data.length}, sha256 ${sha256}; expected size ${expected.size}, sha256 ${expected.sha256})`,
    );
  return data;
}

/** `gpgv --keyring K… --output signed InRelease`: the signed text, only when the signature is good. */
async function gpgvVerify(
  inRelease: Buffer,
  keyrings: readonly string[],
  workDir: string,
  options: { onLine?: (line: string) => void; signal?: AbortSignal },
): Promise<string> {
  const input = join(workDir, 'InRelease');
  const output = join(workDir, 'Release');
  writeFileSync(input, inRelease);
  rmSync(output, { force: true });
  const result = await runStep(
    'gpgv',
    [...keyrings.flatMap((keyring) => ['--keyring', keyring]), '--output', output, input],
    { cwd: workDir, onLine: options.onLine, signal: options.signal },
  );
  throwIfAborted(options.signal);
  if (result.spawnError)
    throw new ZshForkBuildError({
      reason: 'missing_tool',
      problem: "gpgv is not installed, so the mirror's signed index cannot be checked",
      fix: `apt-get install gpgv, or: ${passSourceFix()}`,
    });
  if (result.code !== 0)
    throw fetchFailed(
      `the mirror's InRelease signature did not verify against ${keyrings.join(', ') || 'any keyring'}`,
      undefined,
      result.tail.join('\n'),
    );
  return readFileSync(output, 'utf8');
}

/** The keyrings apt trusts for entries without `Signed-By`. */
function trustedKeyrings(aptDir: string): string[] {
  const keyrings: string[] = [];
  if (existsSync(join(aptDir, 'trusted.gpg'))) keyrings.push(join(aptDir, 'trusted.gpg'));
  try {
    for (const name of readdirSync(join(aptDir, 'trusted.gpg.d')).sort())
      if (name.endsWith('.gpg')) keyrings.push(join(aptDir, 'trusted.gpg.d', name));
  } catch {
    // No directory.
  }
  return keyrings;
}

function fetchFailed(problem: string, cause?: unknown, logTail?: string): ZshForkBuildError {
  return new ZshForkBuildError({
    reason: 'source_fetch_failed',
    problem,
    fix: `check the network, or: ${passSourceFix()}`,
    ...(logTail ? { logTail } : {}),
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The newest `zsh_*.dsc` in `dir`, if any. */
export function findDsc(dir: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const dsc = names.filter((name) => /^zsh_.*\.dsc$/.test(name)).sort();
  return dsc.length > 0 ? join(dir, dsc[dsc.length - 1]!) : undefined;
}

function readAptSources(aptDir: string): AptSourcesFile[] {
  const files: AptSourcesFile[] = [];
  const add = (path: string) => {
    try {
      files.push({ path, text: readFileSync(path, 'utf8') });
    } catch {
      // Unreadable or absent: it contributes nothing.
    }
  };
  add(join(aptDir, 'sources.list'));
  let names: string[] = [];
  try {
    names = readdirSync(join(aptDir, 'sources.list.d'));
  } catch {
    // No directory.
  }
  for (const name of names.sort())
    if (name.endsWith('.list') || name.endsWith('.sources')) add(join(aptDir, 'sources.list.d', name));
  return files;
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw new ZshForkBuildError({
      reason: 'aborted',
      problem: 'fetching the zsh source was cancelled',
      fix: 'run it again',
    });
}
