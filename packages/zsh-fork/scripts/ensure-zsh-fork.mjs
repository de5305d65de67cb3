#!/usr/bin/env node
// Builds the patched zsh once for tests and CI, outside the clone's tracked files, and prints its
// path on stdout. Rebuilds only when the exec-wrapper patch changes (the cache is keyed by its sha256).
//
//   node packages/zsh-fork/scripts/ensure-zsh-fork.mjs [--verbose] [--keep-going]
//
// Cache: $UX_ZSH_FORK_CACHE, else ~/.cache/ux/zsh-fork/<patch sha256 prefix>. Source: $UX_ZSH_SOURCE
// (a zsh 5.9 directory, tarball or Debian .dsc), else the source package `npm run zsh-source`
// downloaded into $UX_ZSH_SOURCE_CACHE or ~/.cache/ux/zsh-src. When neither is there it says so and
// what the named step will do; on a terminal it asks before running it, elsewhere it runs it. Either
// way nothing outside ux's cache changes (no apt source, no apt-get). Answering no leaves the zsh-fork
// tests to fail with the command to run; `--keep-going` (npm test) then exits 0 so the rest of the
// suite runs. Needs the package's build (pnpm install && turbo run build).
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';

const dist = new URL('../dist/index.js', import.meta.url);
if (!existsSync(dist)) {
  process.stderr.write(
    'ensure-zsh-fork: @ux/zsh-fork is not built; run: pnpm exec turbo run build --filter @ux/zsh-fork\n',
  );
  process.exit(1);
}
const zshFork = await import(dist.href);
const verbose = process.argv.includes('--verbose');
const say = (line) => process.stderr.write(`ensure-zsh-fork: ${line}\n`);
const started = Date.now();
const controller = new AbortController();
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => controller.abort());
const FETCH_COMMAND = 'npm run zsh-source';
try {
  let fetchSource = false;
  if (!(await zshFork.currentZshForkCache()) && zshFork.availableZshSource() === undefined) {
    say(
      `the patched zsh is not built and zsh's source is not downloaded; the named step \`${FETCH_COMMAND}\` would:`,
    );
    for (const line of zshFork.describeZshSourceFetch(
      zshFork.planZshSourceFetch({ downloadDir: zshFork.zshSourceCacheDir() }),
    ))
      say(`  - ${line}`);
    if (process.stdin.isTTY && process.stderr.isTTY) {
      const prompt = createInterface({ input: process.stdin, output: process.stderr });
      const answer = await prompt.question('ensure-zsh-fork: run it now? [y/N] ');
      prompt.close();
      fetchSource = /^y(es)?$/i.test(answer.trim());
    } else {
      say('no terminal to ask: running it now (it changes no system configuration)');
      fetchSource = true;
    }
    if (fetchSource)
      await zshFork.fetchZshSourceStep({ say, signal: controller.signal, verbose, quietPlan: true });
  }
  const cache = await zshFork.ensureZshForkCache({
    signal: controller.signal,
    fetchSourceFix: `fetch it with: ${FETCH_COMMAND} (or set UX_ZSH_SOURCE=/path/to/zsh-5.9.tar.xz), then run npm test again`,
    onStep: (step) => say(step),
    onLog: (line) => {
      if (verbose) process.stderr.write(`${line}\n`);
    },
  });
  if (cache.built) say(`built in ${Math.round((Date.now() - started) / 1000)} s`);
  process.stdout.write(`${cache.zshPath}\n`);
} catch (error) {
  say(zshFork.ZshForkBuildError.isInstance(error) ? error.message : (error?.stack ?? String(error)));
  if (process.argv.includes('--keep-going'))
    say('the zsh-fork tests will fail until this is fixed; the rest of the suite runs');
  else process.exitCode = 1;
}
