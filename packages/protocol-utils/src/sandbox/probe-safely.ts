import type { SandboxBackend, SandboxProbe } from '@ux/protocol/core';

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
