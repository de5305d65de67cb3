#!/usr/bin/env node
// The named step that downloads zsh's source for the patched zsh the tests build:
//
//   npm run zsh-source                  (from the repository root; also runs the set-up)
//   pnpm --filter @ux/zsh-fork fetch-source [--dry-run]
//
// It says what it will do, then downloads Debian's zsh source package straight from the mirror the
// system's apt entries name (InRelease checked with gpgv, every file with its SHA-256) into
// $UX_ZSH_SOURCE_CACHE, else ~/.cache/ux/zsh-src. apt's configuration is only read: no apt source is
// added and apt-get is not run. With $UX_ZSH_SOURCE set (a zsh 5.9 directory, tarball or .dsc) there
// is nothing to fetch. `--dry-run` only prints the plan.
import { existsSync } from 'node:fs';

const dist = new URL('../dist/index.js', import.meta.url);
if (!existsSync(dist)) {
  process.stderr.write(
    'zsh-source: @ux/zsh-fork is not built; run: pnpm exec turbo run build --filter @ux/zsh-fork\n',
  );
  process.exit(1);
}
const zshFork = await import(dist.href);
const say = (line) => process.stderr.write(`zsh-source: ${line}\n`);
const controller = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => controller.abort());
try {
  const path = await zshFork.fetchZshSourceStep({
    dryRun: process.argv.includes('--dry-run'),
    say,
    signal: controller.signal,
    verbose: process.argv.includes('--verbose'),
  });
  if (path) process.stdout.write(`${path}\n`);
} catch (error) {
  say(zshFork.ZshForkBuildError.isInstance(error) ? error.message : (error?.stack ?? String(error)));
  process.exitCode = 1;
}
