import { firstAvailableBackend, type SandboxBackend, type SandboxRegistry } from '@ux/protocol';

/** The outcome of looking for a sandbox this host can apply. */
export type SandboxChoice =
  | { available: true; backend: SandboxBackend }
  | { available: false; reason: string; fix: string };

/**
 * Picks the first backend of the registry made for this platform whose probe passes (probes run once).
 * When none can run, the reason and the fix say why, so a sandboxed request fails closed with advice.
 */
export function createSandboxSelection(
  registry: SandboxRegistry,
  platform: NodeJS.Platform,
): () => Promise<SandboxChoice> {
  let choice: Promise<SandboxChoice> | undefined;
  return () => {
    choice ??= choose(registry, platform);
    return choice;
  };
}

async function choose(registry: SandboxRegistry, platform: NodeJS.Platform): Promise<SandboxChoice> {
  const candidates = registry.forPlatform(platform);
  if (candidates.length === 0) {
    return {
      available: false,
      reason: `no sandbox backend for ${platform} is registered with this exec-server`,
      fix:
        registry.ids.length === 0
          ? 'start the exec-server with a sandbox backend (the ux CLI registers bwrap on Linux)'
          : `register a backend made for ${platform} (registered: ${registry.ids.join(', ')})`,
    };
  }
  const found = await firstAvailableBackend(candidates);
  if ('backend' in found) return { available: true, backend: found.backend };
  return {
    available: false,
    reason: found.failures.map((f) => `${f.id}: ${f.reason}`).join('; '),
    fix: found.failures.map((f) => `${f.id}: ${f.fix}`).join('; '),
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
