import type { EffectivePolicy, SandboxBackend, SandboxCapability, SandboxProbe } from '@ux/protocol';
import {
  probeSafely,
  type SandboxRegistry,
  sandboxCandidates,
  selectSandboxBackend,
} from '@ux/protocol-utils';

/** The outcome of looking for a sandbox this host can apply to a policy. */
export type SandboxChoice =
  | { available: true; backend: SandboxBackend; enforces: readonly SandboxCapability[] }
  | { available: false; reason: string; fix: string };

/** Which registered backends the server may use, in which order (the CLI passes config and requirements). */
export interface SandboxSelectionSettings {
  /** Backend ids in order of preference; default every registered one, in registration order. */
  preference?: readonly string[];
  /** Ids the requirements allow; default any. */
  allowed?: readonly string[];
}

/**
 * The server's pick, by the rule every ux host shares (`selectSandboxBackend` of `@ux/protocol`):
 * preference order, allow-list, platform, probe (each backend probed once), and every need of the
 * request's policy among what the backend enforces. Without a policy, the first backend that runs
 * (what `initialize` reports). When none qualifies, the reason and the fix say what is missing and how
 * to get it, so a sandboxed request fails closed with advice. An unknown id in `settings` throws
 * `UnknownPluginError` at once.
 */
export function createSandboxSelection(
  registry: SandboxRegistry,
  platform: NodeJS.Platform,
  settings: SandboxSelectionSettings = {},
): (policy?: EffectivePolicy) => Promise<SandboxChoice> {
  const candidateSettings = {
    registry,
    platform,
    ...(settings.preference ? { preference: settings.preference } : {}),
    ...(settings.allowed ? { allowed: settings.allowed } : {}),
  };
  // The one "unknown backend id" check, before any request.
  sandboxCandidates(candidateSettings);
  const probes = new Map<string, Promise<SandboxProbe>>();
  const probe = (backend: SandboxBackend) => {
    let pending = probes.get(backend.id);
    if (!pending) {
      pending = probeSafely(backend);
      probes.set(backend.id, pending);
    }
    return pending;
  };
  return async (policy) => {
    const selection = await selectSandboxBackend({
      ...candidateSettings,
      probe,
      ...(policy ? { policy } : {}),
    });
    if (selection.ok) return { available: true, backend: selection.backend, enforces: selection.enforces };
    if (registry.ids.length === 0)
      return {
        available: false,
        reason: `no sandbox backend for ${platform} is registered with this exec-server`,
        fix: 'start the exec-server with a sandbox backend (the ux CLI registers the shipped ones)',
      };
    return { available: false, reason: selection.reason, fix: selection.fix };
  };
}

/** The wire name of the sandbox a backend applies (`process/start` result `sandboxType`). */
export function wireSandboxType(backendId: string): string {
  switch (backendId) {
    case 'bwrap':
      return 'linuxSeccomp';
    case 'seatbelt':
      return 'macosSeatbelt';
    case 'windows-token':
      return 'windowsRestrictedToken';
    default:
      return backendId;
  }
}
