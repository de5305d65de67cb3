import { accessSync, constants, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { readBuildInfo } from './build-info.js';
import { buildZshFork } from './build-zsh-fork.js';
import { verifyZshFork } from './verify-zsh-fork.js';
import { zshForkPatch } from './zsh-fork-patch.js';

export interface EnsureZshForkCacheOptions {
  env?: NodeJS.ProcessEnv;
  onLog?: (line: string) => void;
  onStep?: (step: string) => void;
  signal?: AbortSignal;
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
 * The cached patched zsh, built once per patch: reused when its BUILD_INFO.json names the current
 * patch and it passes the smoke test, else built again. The source is `$UX_ZSH_SOURCE` (directory,
 * tarball or .dsc) or Debian's source package, downloaded once into `~/.cache/ux/zsh-src`.
 */
export async function ensureZshForkCache(options: EnsureZshForkCacheOptions = {}): Promise<ZshForkCache> {
  const env = options.env ?? process.env;
  const patch = zshForkPatch();
  const dir = zshForkCacheDir(patch.sha256, env);
  const zshPath = join(dir, 'bin', 'zsh');
  if (readBuildInfo(dir)?.patchSha256 === patch.sha256 && (await verifyZshFork(zshPath)).ok)
    return { zshPath, dir, built: false };
  const build = await buildZshFork({
    outDir: dir,
    ...(env.UX_ZSH_SOURCE ? { source: env.UX_ZSH_SOURCE } : {}),
    sourceCacheDir: join(env.HOME || homedir(), '.cache', 'ux', 'zsh-src'),
    onLog: options.onLog,
    onStep: options.onStep,
    signal: options.signal,
  });
  return { zshPath: build.zshPath, dir, built: true };
}
