import { globToRegExp } from '@ux/protocol/core';

/**
 * Which of the host's variables a command starts from, before ux pins its own. Names match
 * case-insensitively as globs (`AWS_*`).
 */
export interface EnvironmentPolicy {
  /** `all` (default), `core` (HOME, LOGNAME, PATH, SHELL, USER, USERNAME, TMPDIR, TEMP, TMP), or `none`. */
  inherit?: 'all' | 'core' | 'none';
  /** Keep names containing KEY, SECRET or TOKEN (dropped by default). */
  ignoreDefaultExcludes?: boolean;
  /** Drop these names. */
  exclude?: readonly string[];
  /** Keep only these names (after the rest), when given. */
  includeOnly?: readonly string[];
  /** Set these, after filtering. */
  set?: Readonly<Record<string, string>>;
}

const CORE = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'USER', 'USERNAME', 'TMPDIR', 'TEMP', 'TMP'];
const DEFAULT_EXCLUDES = ['*KEY*', '*SECRET*', '*TOKEN*'];

/**
 * Forced on every command (spec §2.1, with `UX_` where Codex says `CODEX_`): no colours, no pagers, a
 * dumb terminal and UTF-8, so output is plain text a model can read.
 */
export const PINNED_ENVIRONMENT: Readonly<Record<string, string>> = {
  NO_COLOR: '1',
  TERM: 'dumb',
  LANG: 'C.UTF-8',
  LC_CTYPE: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  COLORTERM: '',
  PAGER: 'cat',
  GIT_PAGER: 'cat',
  GH_PAGER: 'cat',
  UX_CI: '1',
};

/** The environment of one command: the policy applied to `base`, the thread id, then the pinned keys. */
export function buildEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  policy: EnvironmentPolicy = {},
  threadId?: string,
): Record<string, string> {
  const matcher = (patterns: readonly string[]) => {
    const compiled = patterns.map((pattern) => globToRegExp(pattern.toUpperCase()));
    return (name: string) => compiled.some((regexp) => regexp.test(name.toUpperCase()));
  };
  const inherit = policy.inherit ?? 'all';
  const excluded = matcher([
    ...(policy.ignoreDefaultExcludes ? [] : DEFAULT_EXCLUDES),
    ...(policy.exclude ?? []),
  ]);
  const included = policy.includeOnly ? matcher(policy.includeOnly) : () => true;
  const env: Record<string, string> = {};
  if (inherit !== 'none') {
    for (const [name, value] of Object.entries(base)) {
      if (value === undefined) continue;
      if (inherit === 'core' && !CORE.includes(name)) continue;
      if (excluded(name) || !included(name)) continue;
      env[name] = value;
    }
  }
  Object.assign(env, policy.set ?? {});
  if (threadId !== undefined) env.UX_THREAD_ID = threadId;
  return Object.assign(env, PINNED_ENVIRONMENT);
}

/**
 * The names the policy keeps out of commands (`exclude` and the default `*KEY*`, `*SECRET*`,
 * `*TOKEN*` patterns, and names outside `include_only`): a shell snapshot leaves them out too, even
 * when a login file sets them.
 */
export function excludedByPolicy(policy: EnvironmentPolicy = {}): (name: string) => boolean {
  const patterns = [...(policy.ignoreDefaultExcludes ? [] : DEFAULT_EXCLUDES), ...(policy.exclude ?? [])].map(
    (pattern) => globToRegExp(pattern.toUpperCase()),
  );
  const only = policy.includeOnly?.map((pattern) => globToRegExp(pattern.toUpperCase()));
  return (name) => {
    const upper = name.toUpperCase();
    if (patterns.some((regexp) => regexp.test(upper))) return true;
    return only !== undefined && !only.some((regexp) => regexp.test(upper));
  };
}
