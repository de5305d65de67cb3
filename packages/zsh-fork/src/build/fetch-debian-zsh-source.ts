import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type AptSourcesFile, debSrcEntriesFor, hasDebSrcEntry } from './debian-source-entries.js';
import { runStep } from './run-step.js';
import { passSourceFix } from './zsh-download-hint.js';
import { ZshForkBuildError } from './zsh-fork-build-error.js';

export interface FetchDebianZshSourceOptions {
  /** Where the source package is downloaded (and found again next time). */
  downloadDir: string;
  onLine?: (line: string) => void;
  signal?: AbortSignal;
  /** apt's configuration directory; tests point it elsewhere. */
  aptDir?: string;
  /** Whether this process may change apt's configuration; default: running as root. */
  isRoot?: boolean;
}

/** The file ux adds when no `deb-src` entry exists. */
export const UX_DEB_SRC_FILE = 'ux-zsh-fork-deb-src.sources';

/**
 * Downloads Debian's zsh source package (`apt-get source --download-only zsh`) and returns its
 * `.dsc`. A `.dsc` already in `downloadDir` is reused. When apt has no `deb-src` entry, one mirroring
 * the system's `deb` entries is added (as root), then `apt-get update` runs once.
 */
export async function fetchDebianZshSource(options: FetchDebianZshSourceOptions): Promise<string> {
  const aptDir = options.aptDir ?? '/etc/apt';
  const existing = findDsc(options.downloadDir);
  if (existing) {
    options.onLine?.(`using the zsh source package already downloaded: ${existing}`);
    return existing;
  }
  if (process.platform !== 'linux' || !existsSync('/etc/debian_version') || !existsSync(aptDir))
    throw new ZshForkBuildError({
      reason: 'source_unavailable',
      problem:
        'no zsh source given, and this is not a Debian system where `apt-get source zsh` could fetch it',
      fix: passSourceFix(),
    });
  mkdirSync(options.downloadDir, { recursive: true });
  const download = () =>
    runStep('apt-get', ['source', '--download-only', 'zsh'], {
      cwd: options.downloadDir,
      onLine: options.onLine,
      signal: options.signal,
    });
  let result = await download();
  throwIfAborted(result.aborted);
  if (result.spawnError)
    throw new ZshForkBuildError({
      reason: 'source_unavailable',
      problem: 'no zsh source given, and apt-get is not installed to fetch it',
      fix: passSourceFix(),
    });
  if (result.code !== 0) {
    const isRoot = options.isRoot ?? process.getuid?.() === 0;
    if (!isRoot)
      throw new ZshForkBuildError({
        reason: 'source_unavailable',
        problem:
          '`apt-get source zsh` failed, and only root can add a deb-src entry and run `apt-get update` (ux does that when run as root)',
        fix: `${passSourceFix()}; or run the build as root once`,
        logTail: result.tail.join('\n'),
      });
    const files = readAptSources(aptDir);
    if (!hasDebSrcEntry(files)) {
      const entries = debSrcEntriesFor(files);
      if (!entries)
        throw new ZshForkBuildError({
          reason: 'source_unavailable',
          problem: `apt has no deb entry under ${aptDir} to derive a deb-src entry from`,
          fix: passSourceFix(),
        });
      const file = join(aptDir, 'sources.list.d', UX_DEB_SRC_FILE);
      options.onLine?.(`adding ${file} (deb-src entries for the system's suites)`);
      writeFileSync(file, entries);
    }
    const update = await runStep('apt-get', ['update'], {
      cwd: options.downloadDir,
      onLine: options.onLine,
      signal: options.signal,
    });
    throwIfAborted(update.aborted);
    if (update.code !== 0)
      throw new ZshForkBuildError({
        reason: 'source_fetch_failed',
        problem: '`apt-get update` failed while adding the zsh source package',
        fix: `check the network and apt's sources, or: ${passSourceFix()}`,
        logTail: update.tail.join('\n'),
      });
    result = await download();
    throwIfAborted(result.aborted);
    if (result.code !== 0)
      throw new ZshForkBuildError({
        reason: 'source_fetch_failed',
        problem: '`apt-get source --download-only zsh` failed',
        fix: `check the network and apt's sources, or: ${passSourceFix()}`,
        logTail: result.tail.join('\n'),
      });
  }
  const dsc = findDsc(options.downloadDir);
  if (!dsc)
    throw new ZshForkBuildError({
      reason: 'source_fetch_failed',
      problem: `apt-get source zsh reported success but left no zsh_*.dsc in ${options.downloadDir}`,
      fix: passSourceFix(),
      logTail: result.tail.join('\n'),
    });
  return dsc;
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

function throwIfAborted(aborted: boolean): void {
  if (aborted)
    throw new ZshForkBuildError({
      reason: 'aborted',
      problem: 'the zsh build was cancelled',
      fix: 'run it again',
    });
}
