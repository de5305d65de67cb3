import type { EnvPolicy, ShellEnvironmentPolicy } from '@ux/protocol/core';

/**
 * A shell-environment policy as the wire `envPolicy` of `process/start`: every field written, with the
 * defaults ux applies (`inherit: 'all'`, default excludes on, nothing excluded, set or kept only).
 */
export function encodeEnvPolicy(policy: ShellEnvironmentPolicy = {}): EnvPolicy {
  return {
    inherit: policy.inherit ?? 'all',
    ignoreDefaultExcludes: policy.ignoreDefaultExcludes ?? false,
    exclude: [...(policy.exclude ?? [])],
    set: { ...(policy.set ?? {}) },
    includeOnly: [...(policy.includeOnly ?? [])],
  };
}

/** A wire `envPolicy` (already validated by its schema) as the policy `applyShellEnvironmentPolicy` reads. */
export function decodeEnvPolicy(wire: EnvPolicy): ShellEnvironmentPolicy {
  return {
    inherit: wire.inherit,
    ignoreDefaultExcludes: wire.ignoreDefaultExcludes,
    exclude: [...wire.exclude],
    set: { ...wire.set },
    includeOnly: [...wire.includeOnly],
  };
}
