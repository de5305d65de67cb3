import type { SandboxBackend, SandboxProbe } from '@ux/protocol/core';

/** Why one candidate could not be used. */
export interface BackendFailure {
  id: string;
  reason: string;
  fix: string;
}

/**
 * A backend's probe that never throws: `probe()` must not, but a broken plugin must not take its host
 * down either; its error becomes the reason.
 */
export async function probeSafely(backend: SandboxBackend): Promise<SandboxProbe> {
  try {
    return await backend.probe();
  } catch (error) {
    return {
      available: false,
      reason: `its probe failed: ${error instanceof Error ? error.message : String(error)}`,
      fix: `report this to the maintainers of the ${backend.id} backend`,
    };
  }
}

/**
 * The first candidate, in order, whose probe says it can run here; otherwise every candidate's reason
 * and fix. Hosts that pick a sandbox (the orchestrator, an exec-server) share this rule.
 */
export async function firstAvailableBackend(
  candidates: readonly SandboxBackend[],
  probe: (backend: SandboxBackend) => Promise<SandboxProbe> = probeSafely,
): Promise<{ backend: SandboxBackend } | { failures: BackendFailure[] }> {
  const failures: BackendFailure[] = [];
  for (const backend of candidates) {
    const result = await probe(backend);
    if (result.available) return { backend };
    failures.push({ id: backend.id, reason: result.reason, fix: result.fix });
  }
  return { failures };
}
