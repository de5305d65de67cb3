import type { SandboxBackend, SandboxProbe, SandboxRegistry } from '@ux/protocol';

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
  const failures: string[] = [];
  const fixes: string[] = [];
  for (const backend of candidates) {
    const probe = await safeProbe(backend);
    if (probe.available) return { available: true, backend };
    failures.push(`${backend.id}: ${probe.reason}`);
    fixes.push(`${backend.id}: ${probe.fix}`);
  }
  return { available: false, reason: failures.join('; '), fix: fixes.join('; ') };
}

async function safeProbe(backend: SandboxBackend): Promise<SandboxProbe> {
  try {
    return await backend.probe();
  } catch (error) {
    return {
      available: false,
      reason: `its probe failed: ${(error as Error).message}`,
      fix: 'see the backend docs',
    };
  }
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
