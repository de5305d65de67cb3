import { type EnvPolicy, globToRegExp } from '@ux/protocol';

const CORE = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'USER', 'USERNAME', 'TMPDIR', 'TEMP', 'TMP'];
const DEFAULT_EXCLUDES = ['*KEY*', '*SECRET*', '*TOKEN*'];

/**
 * The child environment of a `process/start`: without a policy exactly `env`; with one, the server's
 * own variables filtered by it (`inherit`, default excludes of `*KEY*`, `*SECRET*`, `*TOKEN*` unless
 * ignored, `exclude`, `includeOnly`), then its `set`, then `env` on top. Names match as
 * case-insensitive globs.
 */
export function envFromPolicy(
  serverEnv: Readonly<Record<string, string | undefined>>,
  policy: EnvPolicy | null | undefined,
  env: Readonly<Record<string, string>>,
): Record<string, string> {
  if (!policy) return { ...env };
  const matcher = (patterns: readonly string[]) => {
    const compiled = patterns.map((pattern) => globToRegExp(pattern.toUpperCase()));
    return (name: string) => compiled.some((regexp) => regexp.test(name.toUpperCase()));
  };
  const excluded = matcher([...(policy.ignoreDefaultExcludes ? [] : DEFAULT_EXCLUDES), ...policy.exclude]);
  const included = policy.includeOnly.length > 0 ? matcher(policy.includeOnly) : () => true;
  const result: Record<string, string> = {};
  if (policy.inherit !== 'none') {
    for (const [name, value] of Object.entries(serverEnv)) {
      if (value === undefined) continue;
      if (policy.inherit === 'core' && !CORE.includes(name)) continue;
      if (excluded(name) || !included(name)) continue;
      result[name] = value;
    }
  }
  return Object.assign(result, policy.set, env);
}
