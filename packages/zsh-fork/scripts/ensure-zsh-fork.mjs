#!/usr/bin/env node
// Builds the patched zsh once for tests and CI, outside the clone's tracked files, and prints its
// path on stdout. Rebuilds only when the exec-wrapper patch changes (the cache is keyed by its sha256).
//
//   node packages/zsh-fork/scripts/ensure-zsh-fork.mjs [--verbose]
//
// Cache: $UX_ZSH_FORK_CACHE, else ~/.cache/ux/zsh-fork/<patch sha256 prefix>. Source: $UX_ZSH_SOURCE
// (a zsh 5.9 directory, tarball or Debian .dsc), else `apt-get source zsh`, downloaded once into
// ~/.cache/ux/zsh-src. Needs the package's build (pnpm install && pnpm exec turbo run build).
import { existsSync } from 'node:fs';

const dist = new URL('../dist/index.js', import.meta.url);
if (!existsSync(dist)) {
  process.stderr.write(
    'ensure-zsh-fork: @ux/zsh-fork is not built; run: pnpm exec turbo run build --filter @ux/zsh-fork\n',
  );
  process.exit(1);
}
const { ensureZshForkCache, ZshForkBuildError } = await import(dist.href);
const verbose = process.argv.includes('--verbose');
const started = Date.now();
const controller = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => controller.abort());
try {
  const cache = await ensureZshForkCache({
    signal: controller.signal,
    onStep: (step) => process.stderr.write(`ensure-zsh-fork: ${step}\n`),
    onLog: (line) => {
      if (verbose) process.stderr.write(`${line}\n`);
    },
  });
  if (cache.built)
    process.stderr.write(`ensure-zsh-fork: built in ${Math.round((Date.now() - started) / 1000)} s\n`);
  process.stdout.write(`${cache.zshPath}\n`);
} catch (error) {
  process.stderr.write(
    `ensure-zsh-fork: ${ZshForkBuildError.isInstance(error) ? error.message : (error?.stack ?? String(error))}\n`,
  );
  process.exitCode = 1;
}
