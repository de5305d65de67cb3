import { createSandboxRegistry, type SandboxBackend, type SandboxRegistry } from '@ux/protocol';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createSeatbeltSandbox } from '@ux/sandbox-seatbelt';
import { createWindowsTokenSandbox } from '@ux/sandbox-windows-token';

/** Every backend the CLI ships, by id. Created on demand: constructing one touches nothing. */
export const BACKEND_FACTORIES: Record<string, () => SandboxBackend> = {
  bwrap: () => createBwrapSandbox(),
  seatbelt: () => createSeatbeltSandbox(),
  'windows-token': () => createWindowsTokenSandbox(),
};

/**
 * The registry the CLI hands to the orchestrator and the exec-server: the backends that configuration
 * and requirements enable (all of them when `enabled` is not given). Unknown ids are the caller's to
 * reject before this point.
 */
export function createCliSandboxRegistry(enabled?: readonly string[]): SandboxRegistry {
  const ids = enabled ?? Object.keys(BACKEND_FACTORIES);
  const backends: Record<string, SandboxBackend> = {};
  for (const id of ids) {
    const factory = BACKEND_FACTORIES[id];
    if (factory) backends[id] = factory();
  }
  return createSandboxRegistry(backends);
}
