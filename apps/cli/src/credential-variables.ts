import type { EnvironmentConfig } from '@ux/config';
import type { ShellEnvironmentPolicy } from '@ux/protocol/core';

/**
 * The variables ux reads a secret from: every environment's `token_env` (sorted, each once). No
 * command ever gets them, whatever `[shell_environment_policy]` says (`inherit = "all"`,
 * `ignore_default_excludes = true`, an `include_only` or a `set` naming one): a command holding an
 * exec-server's token could start a process on that server, outside every sandbox.
 */
export function credentialVariables(configs: readonly EnvironmentConfig[]): string[] {
  const names = new Set<string>();
  for (const config of configs) {
    if (config.kind === 'websocket' && config.tokenEnv !== undefined) names.add(config.tokenEnv);
  }
  return [...names].sort();
}

/**
 * `env` without the credential variables (matched without regard to case, as Windows does): the
 * environment every command, snapshot and escalated program of a session starts from, and the one a
 * stdio exec-server is started with.
 */
export function withoutCredentials<T extends Readonly<Record<string, string | undefined>>>(
  env: T,
  names: readonly string[],
): T {
  if (names.length === 0) return env;
  const withheld = new Set(names.map((name) => name.toUpperCase()));
  return Object.fromEntries(Object.entries(env).filter(([name]) => !withheld.has(name.toUpperCase()))) as T;
}

/**
 * The shell-environment policy with the credential variables excluded whatever else it says: they are
 * added to `exclude` (which applies under `ignore_default_excludes` and before `include_only`) and
 * taken out of `set`. The policy travels to remote servers as `envPolicy` and decides what shell
 * snapshots may export, so the names stay out there too (a server's own variable of that name, a login
 * file that exports it).
 */
export function withCredentialsWithheld(
  policy: ShellEnvironmentPolicy,
  names: readonly string[],
): ShellEnvironmentPolicy {
  if (names.length === 0) return policy;
  const withheld = new Set(names.map((name) => name.toUpperCase()));
  const exclude = [...(policy.exclude ?? [])];
  for (const name of names)
    if (!exclude.some((pattern) => pattern.toUpperCase() === name.toUpperCase())) exclude.push(name);
  const set = policy.set
    ? Object.fromEntries(Object.entries(policy.set).filter(([name]) => !withheld.has(name.toUpperCase())))
    : undefined;
  return { ...policy, exclude, ...(set ? { set } : {}) };
}
