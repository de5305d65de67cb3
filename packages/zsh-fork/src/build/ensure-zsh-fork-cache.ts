import { accessSync, constants, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { readBuildInfo } from './build-info.js';
import { buildZshFork } from './build-zsh-fork.js';
import { findDsc } from './fetch-debian-zsh-source.js';
import { verifyZshFork } from './verify-zsh-fork.js';
import { ZshForkBuildError } from './zsh-fork-build-error.js';
import { zshForkPatch } from './zsh-fork-patch.js';

export interface EnsureZshForkCacheOptions {
  env?: NodeJS.ProcessEnv;
  onLog?: (line: string) => void;
  onStep?: (step: string) => void;
  signal?: AbortSignal;
  /** Download Debian's zsh source first when none is available; default false (it then throws). */
  fetchSource?: boolean;
  /** The fix text for a missing source when `fetchSource` is false: the command that fetches it. */
  fetchSourceFix?: string;
}

export interface ZshForkCache {
  zshPath: string;
  dir: string;
  /** False when an earlier build for the same patch was reused. */
  built: boolean;
}

/**
 * Where tests and CI keep their patched zsh: `$UX_ZSH_FORK_CACHE`, else
 * `~/.cache/ux/zsh-fork/<first 12 hex of the patch's sha256>`, outside any clone. `zshForkPath()` in
 * `@ux/test-utils` computes the same path (it cannot import this package).
 */
export function zshForkCacheDir(patchSha256: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.UX_ZSH_FORK_CACHE) return resolve(env.UX_ZSH_FORK_CACHE);
  return join(env.HOME || homedir(), '.cache', 'ux', 'zsh-fork', patchSha256.slice(0, 12));
}

/**
 * The patched zsh the tests and CI built for the current patch (`ensureZshForkCache`, run by
 * `npm test`), when that file is there and executable: `ux zsh-fork status` and `ux doctor` offer it
 * to a person whose own location is empty. Whether it really is the patched build is
 * `verifyZshFork`'s and `readBuildInfo`'s to say; nothing uses it unless it is configured.
 */
export function cachedZshForkPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const zshPath = join(zshForkCacheDir(zshForkPatch().sha256, env), 'bin', 'zsh');
  try {
    if (!statSync(zshPath).isFile()) return undefined;
    accessSync(zshPath, constants.X_OK);
    return zshPath;
  } catch {
    return undefined;
  }
}

/**
 * Where Debian's zsh source package is downloaded for the tests' build (`npm run zsh-source`):
 * `$UX_ZSH_SOURCE_CACHE`, else `~/.cache/ux/zsh-src`.
 */
export function zshSourceCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.UX_ZSH_SOURCE_CACHE) return resolve(env.UX_ZSH_SOURCE_CACHE);
  return join(env.HOME || homedir(), '.cache', 'ux', 'zsh-src');
}

/**
 * The zsh source a build would use without downloading anything: `$UX_ZSH_SOURCE`, else a source
 * package already in `zshSourceCacheDir`; undefined when it would have to be fetched first.
 */
export function availableZshSource(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.UX_ZSH_SOURCE ? resolve(env.UX_ZSH_SOURCE) : findDsc(zshSourceCacheDir(env));
}

/** The cached build for the current patch, when it is there and passes the smoke test. */
export async function currentZshForkCache(
  env: NodeJS.ProcessEnv = process.env,
): Promise<ZshForkCache | undefined> {
  const patch = zshForkPatch();
  const dir = zshForkCacheDir(patch.sha256, env);
  const zshPath = join(dir, 'bin', 'zsh');
  if (readBuildInfo(dir)?.patchSha256 === patch.sha256 && (await verifyZshFork(zshPath)).ok)
    return { zshPath, dir, built: false };
  return undefined;
}

/**
 * The cached patched zsh, built once per patch: reused when its BUILD_INFO.json names the current
 * patch and it passes the smoke test, else built again. The source is `$UX_ZSH_SOURCE` (directory,
 * tarball or .dsc) or Debian's source package in `zshSourceCacheDir`, which is downloaded there
 * first (from the system's mirror, changing no configuration) only when `fetchSource` is true;
 * otherwise a missing source throws `ZshForkBuildError` (`source_unavailable`).
 */
export async function ensureZshForkCache(options: EnsureZshForkCacheOptions = {}): Promise<ZshForkCache> {
  const env = options.env ?? process.env;
  const current = await currentZshForkCache(env);
  if (current) return current;
  const dir = zshForkCacheDir(zshForkPatch().sha256, env);
  const source = availableZshSource(env);
  if (source === undefined && options.fetchSource !== true)
    throw new ZshForkBuildError({
      reason: 'source_unavailable',
      problem: `the patched zsh is not built (no ${join(dir, 'bin', 'zsh')}) and zsh's source is not downloaded (nothing in ${zshSourceCacheDir(env)}, UX_ZSH_SOURCE unset)`,
      fix:
        options.fetchSourceFix ??
        'fetch it with: ux zsh-fork build (or pass UX_ZSH_SOURCE=/path/to/zsh-5.9.tar.xz)',
    });
  const build = await buildZshFork({
    outDir: dir,
    ...(source === undefined ? {} : { source }),
    sourceCacheDir: zshSourceCacheDir(env),
    onLog: options.onLog,
    onStep: options.onStep,
    signal: options.signal,
  });
  return { zshPath: build.zshPath, dir, built: true };
}
