import type { EffectivePolicy, SandboxBackend, SandboxCapability, SandboxProbe } from '@ux/protocol/core';
import {
  type ConsideredBackend,
  probeSafely,
  type SandboxRegistry,
  type SandboxSelection,
  sandboxCandidates,
  sandboxSelectionError,
  selectSandboxBackend,
} from '@ux/protocol-utils';

export interface SandboxSelectorSettings {
  sandboxRegistry: SandboxRegistry;
  platform: NodeJS.Platform;
  /** Backends the config enables, in order of preference; default every registered one, in order. */
  enabledBackends?: readonly string[];
  /** Backends managed requirements allow (`allowed_sandbox_backends`); default any. */
  allowedBackends?: readonly string[];
}

/** A backend chosen for a policy, with what it declared it enforces here. */
export interface ChosenSandbox {
  backend: SandboxBackend;
  enforces: readonly SandboxCapability[];
  /**
   * Backends preferred before the chosen one that were not used, and why (it cannot run here, or it
   * does not enforce what the policy needs): results say so, so nobody takes the fallback for the
   * backend they configured first.
   */
  passedOver: PassedOverBackend[];
}

/** A preferred backend that was not used for a command, and why. */
export interface PassedOverBackend {
  backend: string;
  reason: string;
}

/** The candidates before the chosen one that were probed and not used, with why. */
export function passedOverBackends(considered: readonly ConsideredBackend[]): PassedOverBackend[] {
  const passed: PassedOverBackend[] = [];
  for (const candidate of considered) {
    if (candidate.outcome === 'chosen') break;
    if (candidate.outcome === 'unavailable')
      passed.push({ backend: candidate.id, reason: `cannot run here: ${candidate.reason}` });
    else if (candidate.outcome === 'lacks')
      passed.push({
        backend: candidate.id,
        reason: `does not enforce ${candidate.unmet.map((need) => need.capability).join(', ')}`,
      });
  }
  return passed;
}

/** Picks the platform sandbox from the registered backends (`selectSandboxBackend` of `@ux/protocol`). */
export interface SandboxSelector {
  /** Backends that are registered, enabled, allowed and made for this platform, in preference order. */
  readonly candidates: readonly SandboxBackend[];
  /**
   * The first candidate whose probe passes and that enforces everything `policy` needs (`policyNeeds`;
   * without a policy, the first that runs). Probes run once per selector and are remembered. Throws
   * `SandboxUnavailableError` saying what is missing and how to get it: ux never falls back to a weaker
   * sandbox or to running unsandboxed.
   */
  select(policy?: EffectivePolicy): Promise<SandboxBackend>;
  /** `select`, with what the chosen backend enforces (for events and receipts). */
  choose(policy?: EffectivePolicy): Promise<ChosenSandbox>;
  /** The whole selection for a policy, without throwing (`ux doctor`); `probeAll` probes every candidate. */
  survey(policy?: EffectivePolicy, options?: { probeAll?: boolean }): Promise<SandboxSelection>;
}

/**
 * Builds a selector. An enabled or allowed id that is not registered throws `UnknownPluginError` listing
 * the registered ones (a config typo must not silently drop a sandbox).
 */
export function createSandboxSelector(settings: SandboxSelectorSettings): SandboxSelector {
  const candidateSettings = {
    registry: settings.sandboxRegistry,
    platform: settings.platform,
    ...(settings.enabledBackends ? { preference: settings.enabledBackends } : {}),
    ...(settings.allowedBackends ? { allowed: settings.allowedBackends } : {}),
  };
  const { candidates } = sandboxCandidates(candidateSettings);

  const probes = new Map<string, Promise<SandboxProbe>>();
  const probe = (backend: SandboxBackend) => {
    let pending = probes.get(backend.id);
    if (!pending) {
      pending = probeSafely(backend);
      probes.set(backend.id, pending);
    }
    return pending;
  };
  const survey = (policy?: EffectivePolicy, options: { probeAll?: boolean } = {}) =>
    selectSandboxBackend({
      ...candidateSettings,
      probe,
      ...(policy ? { policy } : {}),
      ...(options.probeAll ? { probeAll: true } : {}),
    });
  const choose = async (policy?: EffectivePolicy): Promise<ChosenSandbox> => {
    const selection = await survey(policy);
    if (!selection.ok) throw sandboxSelectionError(selection);
    return {
      backend: selection.backend,
      enforces: selection.enforces,
      passedOver: passedOverBackends(selection.considered),
    };
  };

  return {
    candidates,
    choose,
    survey,
    select: async (policy) => (await choose(policy)).backend,
  };
}
