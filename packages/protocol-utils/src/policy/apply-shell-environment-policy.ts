import type { ShellEnvironmentPolicy } from '@ux/protocol/core';
import { globToRegExp } from './glob-to-regexp.js';

/** The names `inherit: 'core'` keeps, matched exactly. */
export const CORE_ENVIRONMENT_VARIABLES: readonly string[] = [
  'HOME',
  'LOGNAME',
  'PATH',
  'SHELL',
  'USER',
  'USERNAME',
  'TMPDIR',
  'TEMP',
  'TMP',
];

/** Dropped unless `ignoreDefaultExcludes`: anything that looks like a credential. */
export const DEFAULT_ENVIRONMENT_EXCLUDES: readonly string[] = ['*KEY*', '*SECRET*', '*TOKEN*'];

/**
 * The variables a command starts from: Codex's shell-environment-policy rules, in Codex's order.
 * 1. `inherit` picks the starting set from `base` (all, the core names, or none);
 * 2. the default excludes drop `*KEY*`, `*SECRET*`, `*TOKEN*`, unless `ignoreDefaultExcludes`;
 * 3. `exclude` drops what it matches;
 * 4. `set` adds or overrides (excludes do not apply to it);
 * 5. a non-empty `includeOnly` keeps only what it matches (`set` names too); an empty one filters
 *    nothing.
 * `undefined` values in `base` are absent variables.
 */
export function applyShellEnvironmentPolicy(
  base: Readonly<Record<string, string | undefined>>,
  policy: ShellEnvironmentPolicy = {},
): Record<string, string> {
  const inherit = policy.inherit ?? 'all';
  const excluded = matcher([
    ...(policy.ignoreDefaultExcludes ? [] : DEFAULT_ENVIRONMENT_EXCLUDES),
    ...(policy.exclude ?? []),
  ]);
  const env: Record<string, string> = {};
  if (inherit !== 'none') {
    for (const [name, value] of Object.entries(base)) {
      if (value === undefined) continue;
      if (inherit === 'core' && !CORE_ENVIRONMENT_VARIABLES.includes(name)) continue;
      if (excluded(name)) continue;
      env[name] = value;
    }
  }
  Object.assign(env, policy.set ?? {});
  const includeOnly = policy.includeOnly ?? [];
  if (includeOnly.length === 0) return env;
  const included = matcher(includeOnly);
  for (const name of Object.keys(env)) if (!included(name)) delete env[name];
  return env;
}

/**
 * Whether the policy keeps a variable of this name out of commands even when something else (a login
 * file a shell snapshot captures) sets it: the default excludes (unless ignored), `exclude`, and,
 * when `includeOnly` is non-empty, names outside it. `inherit` is not considered: it decides where
 * variables come from, not which names are allowed.
 */
export function excludedByShellEnvironmentPolicy(
  policy: ShellEnvironmentPolicy = {},
): (name: string) => boolean {
  const excluded = matcher([
    ...(policy.ignoreDefaultExcludes ? [] : DEFAULT_ENVIRONMENT_EXCLUDES),
    ...(policy.exclude ?? []),
  ]);
  const includeOnly = policy.includeOnly ?? [];
  const included = includeOnly.length === 0 ? () => true : matcher(includeOnly);
  return (name) => excluded(name) || !included(name);
}

/** Case-insensitive: does a name match any of these globs? */
function matcher(patterns: readonly string[]): (name: string) => boolean {
  const compiled = patterns.map(compiledPattern);
  return (name) => {
    const upper = name.toUpperCase();
    return compiled.some((regexp) => regexp.test(upper));
  };
}

// Every command's environment goes through the same few patterns: each is compiled once. (A RegExp
// without the `g` or `y` flag keeps no state between `test` calls, so sharing one is safe.)
const COMPILED = new Map<string, RegExp>();
const COMPILED_MAX = 256;

function compiledPattern(pattern: string): RegExp {
  const upper = pattern.toUpperCase();
  let regexp = COMPILED.get(upper);
  if (regexp === undefined) {
    regexp = globToRegExp(upper);
    if (COMPILED.size >= COMPILED_MAX) COMPILED.clear();
    COMPILED.set(upper, regexp);
  }
  return regexp;
}
