import type { EffectivePolicy, SandboxBackend, SandboxProbe } from '@ux/protocol/core';
import {
  type PolicyNeed,
  policyNeeds,
  type SandboxCapability,
  SandboxUnavailableError,
  UnknownPluginError,
  unmetNeeds,
} from '@ux/protocol/core';
import { probeSafely } from './probe-safely.js';
import type { SandboxRegistry } from './sandbox-registry.js';

/** Which backends a host may use, in order: the same rule for the orchestrator, an exec-server and `ux doctor`. */
export interface SandboxCandidateSettings {
  registry: SandboxRegistry;
  platform: NodeJS.Platform;
  /** Backend ids in order of preference (config `sandbox_backends`); default every registered one, in order. */
  preference?: readonly string[];
  /** Ids the managed requirements allow (`allowed_sandbox_backends`); default any. */
  allowed?: readonly string[];
}

/** A registered backend that is not a candidate here, and why. */
export interface ExcludedBackend {
  id: string;
  /** `platform`: made for others; `not_enabled`: not in the preference; `not_allowed`: barred by the requirements. */
  why: 'platform' | 'not_enabled' | 'not_allowed';
  reason: string;
}

export interface SandboxCandidates {
  /** Registered, preferred, allowed and made for this platform, in preference order. */
  candidates: SandboxBackend[];
  excluded: ExcludedBackend[];
}

/**
 * The one check of backend ids a host was given (config, a command-line option): every id must be
 * registered, or `UnknownPluginError` lists the registered ones (a typo must not silently drop a sandbox).
 */
export function checkSandboxBackendIds(ids: readonly string[], registered: readonly string[]): void {
  for (const id of ids) {
    if (!registered.includes(id))
      throw new UnknownPluginError({ kind: 'sandbox backend', id, available: registered });
  }
}

/** The candidates in preference order, and why each other registered backend is not one. */
export function sandboxCandidates(settings: SandboxCandidateSettings): SandboxCandidates {
  const { registry, platform } = settings;
  const preference = settings.preference ?? registry.ids;
  // An allow-list may name backends this host does not register (requirements are shared); a
  // preference may not: `sandbox_backends = ["bwrp"]` must not silently drop the sandbox.
  checkSandboxBackendIds(preference, registry.ids);
  const excluded: ExcludedBackend[] = [];
  const candidates: SandboxBackend[] = [];
  for (const id of registry.ids) {
    const backend = registry.get(id);
    if (!backend.platforms.includes(platform))
      excluded.push({ id, why: 'platform', reason: `${id} runs only on ${backend.platforms.join(', ')}` });
    else if (!preference.includes(id))
      excluded.push({
        id,
        why: 'not_enabled',
        reason: `${id} is not enabled in the config (sandbox_backends)`,
      });
    else if (settings.allowed && !settings.allowed.includes(id))
      excluded.push({
        id,
        why: 'not_allowed',
        reason: `${id} is not allowed by the managed requirements (allowed_sandbox_backends)`,
      });
    else candidates.push(backend);
  }
  candidates.sort((a, b) => preference.indexOf(a.id) - preference.indexOf(b.id));
  return { candidates, excluded };
}

/** A candidate whose probe passed: what it declared and which of the policy's needs it leaves unmet. */
export interface ProbedBackend {
  id: string;
  /** `chosen`; `lacks`: it runs here but does not enforce all the policy needs; `usable`: a later one, probed on request. */
  outcome: 'chosen' | 'lacks' | 'usable';
  version?: string;
  enforces: readonly SandboxCapability[];
  /** The policy's needs it leaves unmet (empty when chosen or usable). */
  unmet: PolicyNeed[];
}

/** A candidate whose probe failed, with its reason and fix. */
export interface UnavailableBackend {
  id: string;
  outcome: 'unavailable';
  reason: string;
  fix: string;
}

/** What selection found out about one candidate (`not_probed`: one was chosen before it). */
export type ConsideredBackend = ProbedBackend | UnavailableBackend | { id: string; outcome: 'not_probed' };

export interface SandboxSelectionSettings extends SandboxCandidateSettings {
  /** The policy to enforce; absent: any backend that runs here will do (what `ux doctor` shows first). */
  policy?: EffectivePolicy;
  /** How to probe; default `probeSafely` (hosts pass one that remembers). */
  probe?: (backend: SandboxBackend) => Promise<SandboxProbe>;
  /** Probe every candidate, not only up to the chosen one (`ux doctor`). */
  probeAll?: boolean;
}

export type SandboxSelection =
  | {
      ok: true;
      backend: SandboxBackend;
      /** What the chosen backend declared it enforces here. */
      enforces: readonly SandboxCapability[];
      needs: PolicyNeed[];
      considered: ConsideredBackend[];
      excluded: ExcludedBackend[];
    }
  | {
      ok: false;
      /** The one backend the refusal is about, when there was exactly one candidate. */
      backend?: string;
      reason: string;
      fix: string;
      needs: PolicyNeed[];
      considered: ConsideredBackend[];
      excluded: ExcludedBackend[];
    };

/**
 * Picks the sandbox for a policy: the first candidate (preference order, allow-list, platform) whose
 * probe passes and whose declared `enforces` covers every need of the policy (`policyNeeds`). A backend
 * that runs but lacks a guarantee is skipped, never used with less than the policy asks. When none
 * qualifies the result says what is missing and how to get it; it never proposes running without a
 * sandbox. Throws `UnknownPluginError` for a preferred id that is not registered.
 */
export async function selectSandboxBackend(settings: SandboxSelectionSettings): Promise<SandboxSelection> {
  const { candidates, excluded } = sandboxCandidates(settings);
  const probe = settings.probe ?? probeSafely;
  const needs = settings.policy ? policyNeeds(settings.policy) : [];
  const considered: ConsideredBackend[] = [];
  let chosen: { backend: SandboxBackend; enforces: readonly SandboxCapability[] } | undefined;
  for (const backend of candidates) {
    if (chosen && !settings.probeAll) {
      considered.push({ id: backend.id, outcome: 'not_probed' });
      continue;
    }
    const result = await probe(backend);
    if (!result.available) {
      considered.push({ id: backend.id, outcome: 'unavailable', reason: result.reason, fix: result.fix });
      continue;
    }
    const enforces = result.enforces ?? [];
    const unmet = unmetNeeds(needs, enforces);
    const version = result.version === undefined ? {} : { version: result.version };
    if (unmet.length > 0) {
      considered.push({ id: backend.id, outcome: 'lacks', ...version, enforces, unmet });
    } else if (chosen) {
      considered.push({ id: backend.id, outcome: 'usable', ...version, enforces, unmet });
    } else {
      chosen = { backend, enforces };
      considered.push({ id: backend.id, outcome: 'chosen', ...version, enforces, unmet });
    }
  }
  if (chosen) return { ok: true, ...chosen, needs, considered, excluded };
  return {
    ok: false,
    ...refusal(settings, candidates, considered, excluded, needs),
    needs,
    considered,
    excluded,
  };
}

/** How a policy could stop needing a guarantee, where the user can choose that (never "run without a sandbox"). */
const WITHOUT_NEED: Partial<Record<SandboxCapability, string>> = {
  network_off: 'allow the network for this run on purpose (--network)',
  network_by_domain: 'turn the network off (--no-network) instead of allowing it by domain',
  unix_socket_control: 'leave out allow_unix_sockets (--allow-unix-socket)',
  private_tmp: 'set [sandbox_workspace_write] private_tmp = false',
};

function refusal(
  settings: SandboxSelectionSettings,
  candidates: readonly SandboxBackend[],
  considered: readonly ConsideredBackend[],
  excluded: readonly ExcludedBackend[],
  _needs: readonly PolicyNeed[],
): { backend?: string; reason: string; fix: string } {
  const { platform } = settings;
  if (settings.registry.ids.length === 0)
    return {
      reason: `the policy needs a sandbox, but no sandbox backend is registered for ${platform}`,
      fix: 'register one (the ux CLI registers the shipped backends; an embedder passes createSandboxRegistry({ bwrap: createBwrapSandbox() }))',
    };
  if (candidates.length === 0)
    return {
      reason: `the policy needs a sandbox, but no registered backend can be used on ${platform} (${excluded.map((e) => e.reason).join('; ')})`,
      fix: `enable (sandbox_backends) and allow (allowed_sandbox_backends) a backend made for ${platform}`,
    };
  const lacking = considered.filter((c): c is ProbedBackend => c.outcome === 'lacks');
  const unavailable = considered.filter((c): c is UnavailableBackend => c.outcome === 'unavailable');
  const [only] = considered;
  if (lacking.length === 0) {
    if (only && considered.length === 1 && only.outcome === 'unavailable')
      return { backend: only.id, reason: only.reason, fix: only.fix };
    return {
      reason: `no sandbox backend can run here: ${unavailable.map((f) => `${f.id}: ${f.reason}`).join('; ')}`,
      fix: unavailable.map((f) => `${f.id}: ${f.fix}`).join('; '),
    };
  }
  // Something runs here, but nothing that runs enforces all the policy needs: say what and how to get it.
  const missing = [...new Map(lacking.flatMap((c) => c.unmet).map((n) => [n.capability, n])).values()];
  const lacks = lacking
    .map((c) => `${c.id} does not enforce ${c.unmet.map((n) => `${n.capability} (${n.because})`).join(', ')}`)
    .join('; ');
  const down = unavailable.map((f) => `${f.id} cannot run here: ${f.reason}`);
  const notEnabled = excluded.filter((e) => e.why === 'not_enabled').map((e) => e.id);
  const getIt = [
    ...unavailable.map((f) => `make ${f.id} run (${f.fix})`),
    `enable a backend that enforces ${missing.map((n) => n.capability).join(' and ')}${notEnabled.length > 0 ? ` (registered here but not in sandbox_backends: ${notEnabled.join(', ')})` : ''} (sandbox_backends, sandbox_plugins; \`ux doctor\` lists what each backend enforces)`,
    ...missing.flatMap((n) => {
      const change = WITHOUT_NEED[n.capability];
      return change ? [`or, for ${n.capability}, ${change}`] : [];
    }),
  ];
  return {
    ...(lacking.length === 1 && considered.length === 1 ? { backend: lacking[0]!.id } : {}),
    reason: `the policy needs ${missing.map((n) => n.capability).join(', ')}, which no usable sandbox backend enforces: ${[lacks, ...down].join('; ')}`,
    fix: getIt.join('; '),
  };
}

/** The refusal of a selection that found nothing, as the error hosts throw (fail closed). */
export function sandboxSelectionError(
  selection: Extract<SandboxSelection, { ok: false }>,
): SandboxUnavailableError {
  return new SandboxUnavailableError({
    ...(selection.backend ? { backend: selection.backend } : {}),
    reason: selection.reason,
    fix: selection.fix,
  });
}
