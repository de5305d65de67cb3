import { resolve } from 'node:path';
import { zshSourceCacheDir } from './ensure-zsh-fork-cache.js';
import {
  describeZshSourceFetch,
  fetchDebianZshSource,
  findDsc,
  planZshSourceFetch,
} from './fetch-debian-zsh-source.js';

export interface FetchZshSourceStepOptions {
  env?: NodeJS.ProcessEnv;
  /** Where the step says what it does, one line at a time. */
  say: (line: string) => void;
  signal?: AbortSignal;
  /** Also say every URL fetched and every gpgv line. */
  verbose?: boolean;
  /** Say the plan and stop. */
  dryRun?: boolean;
  /** The plan was already shown (by a caller that asked first): do not say it again. */
  quietPlan?: boolean;
}

/**
 * The named step `npm run zsh-source`: says what it will do, then downloads Debian's zsh source
 * package into `zshSourceCacheDir` (nothing else changes). Returns the source a build will use:
 * `$UX_ZSH_SOURCE` when set, the package already downloaded, or the one just fetched; undefined
 * after a dry run.
 */
export async function fetchZshSourceStep(options: FetchZshSourceStepOptions): Promise<string | undefined> {
  const env = options.env ?? process.env;
  if (env.UX_ZSH_SOURCE) {
    const source = resolve(env.UX_ZSH_SOURCE);
    options.say(`UX_ZSH_SOURCE is set: the build uses ${source}; nothing to fetch`);
    return source;
  }
  const downloadDir = zshSourceCacheDir(env);
  const existing = findDsc(downloadDir);
  if (existing) {
    options.say(`zsh's source is already downloaded: ${existing}`);
    return existing;
  }
  const plan = planZshSourceFetch({ downloadDir });
  if (!options.quietPlan) {
    options.say(options.dryRun ? 'this step would:' : 'this step will:');
    for (const line of describeZshSourceFetch(plan)) options.say(`  - ${line}`);
  }
  if (options.dryRun) return undefined;
  const dsc = await fetchDebianZshSource({
    downloadDir,
    ...(options.verbose ? { onLine: options.say } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  options.say(`downloaded zsh's source package: ${dsc}`);
  return dsc;
}
