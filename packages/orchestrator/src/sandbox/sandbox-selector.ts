import {
  firstAvailableBackend,
  probeSafely,
  type SandboxBackend,
  type SandboxProbe,
  type SandboxRegistry,
  SandboxUnavailableError,
} from '@ux/protocol/core';

export interface SandboxSelectorSettings {
  sandboxRegistry: SandboxRegistry;
  platform: NodeJS.Platform;
  /** Backends the config enables, in order of preference; default every registered one, in order. */
  enabledBackends?: readonly string[];
  /** Backends managed requirements allow (`allowed_sandbox_backends`); default any. */
  allowedBackends?: readonly string[];
}

/** Picks the platform sandbox from the registered backends. */
export interface SandboxSelector {
  /** Backends that are registered, enabled, allowed and made for this platform, in preference order. */
  readonly candidates: readonly SandboxBackend[];
  /**
   * The first candidate whose probe says it can run here. Probes run once per selector and are
   * remembered. Throws `SandboxUnavailableError` saying what is missing and how to fix it: ux never
   * falls back to running unsandboxed.
   */
  select(): Promise<SandboxBackend>;
}

/**
 * Builds a selector. An enabled id that is not registered throws `UnknownPluginError` listing the
 * registered ones (a config typo must not silently drop a sandbox).
 */
export function createSandboxSelector(settings: SandboxSelectorSettings): SandboxSelector {
  const { sandboxRegistry: registry, platform } = settings;
  const enabled = settings.enabledBackends ?? registry.ids;
  for (const id of enabled) registry.get(id);
  const allowed = settings.allowedBackends;
  const excluded: string[] = [];
  const candidates: SandboxBackend[] = [];
  for (const id of registry.ids) {
    const backend = registry.get(id);
    if (!backend.platforms.includes(platform))
      excluded.push(`${id} runs only on ${backend.platforms.join(', ')}`);
    else if (!enabled.includes(id)) excluded.push(`${id} is not enabled in the config`);
    else if (allowed && !allowed.includes(id))
      excluded.push(`${id} is not allowed by the managed requirements`);
    else candidates.push(backend);
  }
  candidates.sort((a, b) => enabled.indexOf(a.id) - enabled.indexOf(b.id));

  const probes = new Map<string, Promise<SandboxProbe>>();
  const probe = (backend: SandboxBackend) => {
    let pending = probes.get(backend.id);
    if (!pending) {
      pending = probeSafely(backend);
      probes.set(backend.id, pending);
    }
    return pending;
  };

  return {
    candidates,
    async select() {
      if (candidates.length === 0) throw noCandidate(platform, registry, excluded);
      const found = await firstAvailableBackend(candidates, probe);
      if ('backend' in found) return found.backend;
      const { failures } = found;
      const [only] = failures;
      if (only && failures.length === 1) {
        throw new SandboxUnavailableError({ backend: only.id, reason: only.reason, fix: only.fix });
      }
      throw new SandboxUnavailableError({
        reason: `no sandbox backend can run here: ${failures.map((f) => `${f.id}: ${f.reason}`).join('; ')}`,
        fix: failures.map((f) => `${f.id}: ${f.fix}`).join('; '),
      });
    },
  };
}

function noCandidate(
  platform: NodeJS.Platform,
  registry: SandboxRegistry,
  excluded: readonly string[],
): SandboxUnavailableError {
  const withoutSandbox =
    'or choose the danger-full-access sandbox mode to run commands without a sandbox on purpose';
  if (registry.ids.length === 0) {
    return new SandboxUnavailableError({
      reason: `the policy needs a sandbox, but no sandbox backend is registered for ${platform}`,
      fix: `register one, e.g. createSandboxRegistry({ bwrap: createBwrapSandbox() }), ${withoutSandbox}`,
    });
  }
  return new SandboxUnavailableError({
    reason: `the policy needs a sandbox, but no registered backend can be used on ${platform} (${excluded.join('; ')})`,
    fix: `enable and allow a backend made for ${platform}, ${withoutSandbox}`,
  });
}
