import { createHash } from 'node:crypto';
import { accessSync, constants, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The patched zsh that `packages/zsh-fork/scripts/ensure-zsh-fork.mjs` builds for tests (from the source
 * `npm run zsh-source` downloads):
 * `$UX_ZSH_FORK_CACHE/bin/zsh`, else `~/.cache/ux/zsh-fork/<first 12 hex of the patch's sha256>/bin/zsh`
 * (the same rule as `zshForkCacheDir` in `@ux/zsh-fork`, which this package cannot import). Throws,
 * with the command that builds it, when it is missing or was built from another version of the patch:
 * a test that needs the fork fails, it is never skipped.
 */
export function zshForkPath(env: NodeJS.ProcessEnv = process.env): string {
  const root = repositoryRoot();
  const patch = readFileSync(join(root, 'packages', 'zsh-fork', 'patches', 'zsh-exec-wrapper.patch'), 'utf8');
  const sha256 = createHash('sha256').update(patch).digest('hex');
  const dir = env.UX_ZSH_FORK_CACHE
    ? resolve(env.UX_ZSH_FORK_CACHE)
    : join(env.HOME || homedir(), '.cache', 'ux', 'zsh-fork', sha256.slice(0, 12));
  const zsh = join(dir, 'bin', 'zsh');
  // zsh's source is its own named step: the build cannot start without it.
  const build = `node ${join(root, 'packages', 'zsh-fork', 'scripts', 'ensure-zsh-fork.mjs')} (zsh's source first, when it is not downloaded yet: npm run zsh-source)`;
  try {
    accessSync(zsh, constants.X_OK);
  } catch {
    throw new Error(`the patched zsh is not built (no ${zsh}); build it once with: ${build}`);
  }
  let built: string | undefined;
  try {
    built = (JSON.parse(readFileSync(join(dir, 'BUILD_INFO.json'), 'utf8')) as { patchSha256?: string })
      .patchSha256;
  } catch {
    // Reported below.
  }
  if (built !== sha256)
    throw new Error(
      `the patched zsh at ${zsh} was not built from the current patch (sha256 ${sha256.slice(0, 12)}); rebuild it with: ${build}`,
    );
  return zsh;
}

function repositoryRoot(): string {
  const start = dirname(fileURLToPath(import.meta.url));
  for (let dir = start; dirname(dir) !== dir; dir = dirname(dir))
    if (existsSync(join(dir, 'pnpm-workspace.yaml'))) return dir;
  throw new Error(`zshForkPath: no pnpm-workspace.yaml above ${start}`);
}
