import { join } from 'node:path';
import {
  createSandboxRegistry,
  type LaunchPlan,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxRegistry,
  UnknownPluginError,
} from '@ux/protocol/core';

export interface ShippedBackendOptions {
  /** Where backends may remember what their probes learned (`$UX_HOME/cache`); default nowhere. */
  cacheDir?: string;
  /** Where protected paths a command created are moved (`$UX_HOME/quarantine`); default removed. */
  quarantineDir?: string;
  /** The bwrap binary (config `bwrap_path`); default the first `bwrap` on PATH. */
  bwrapPath?: string;
}

interface Shipped {
  platforms: NodeJS.Platform[];
  load: (options: ShippedBackendOptions) => Promise<SandboxBackend>;
}

/**
 * Every backend the CLI ships, by id, with the platforms it runs on. A backend's package is imported
 * only when it is probed or asked for a plan, so a Linux host never loads the macOS or Windows code.
 */
const SHIPPED: Record<string, Shipped> = {
  bwrap: {
    platforms: ['linux'],
    load: async ({ cacheDir, quarantineDir, bwrapPath }) =>
      (await import('@ux/sandbox-bwrap')).createBwrapSandbox({
        ...(cacheDir ? { probeCacheFile: join(cacheDir, 'bwrap-probe.json') } : {}),
        ...(quarantineDir ? { quarantineDir } : {}),
        ...(bwrapPath ? { bwrapPath } : {}),
      }),
  },
  seatbelt: {
    platforms: ['darwin'],
    load: async () => (await import('@ux/sandbox-seatbelt')).createSeatbeltSandbox(),
  },
  'windows-token': {
    platforms: ['win32'],
    load: async () => (await import('@ux/sandbox-windows-token')).createWindowsTokenSandbox(),
  },
};

export const BACKEND_IDS = Object.keys(SHIPPED);

/** A shipped backend, loaded on first use. */
export function shippedBackend(id: string, options: ShippedBackendOptions = {}): SandboxBackend {
  const shipped = SHIPPED[id];
  if (!shipped) throw new Error(`no shipped sandbox backend "${id}"`);
  let loaded: SandboxBackend | undefined;
  let loading: Promise<SandboxBackend> | undefined;
  const backend = () => {
    loading ??= shipped.load(options).then((created) => {
      loaded = created;
      return created;
    });
    return loading;
  };
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id,
    platforms: shipped.platforms,
    probe: async () => (await backend()).probe(),
    plan: async (request): Promise<LaunchPlan> => (await backend()).plan(request),
    // Denials are classified after a plan ran, so by then the backend is loaded.
    classifyDenial: (evidence) => loaded?.classifyDenial?.(evidence) ?? 'unknown',
    // A backend still loading (a probe under way) is closed once it has loaded.
    close: async () => {
      if (loading) await (await loading).close?.();
    },
  };
}

/**
 * The registry the CLI hands to the orchestrator and the exec-server: the backends that configuration
 * and requirements enable (all of them when `enabled` is not given). An id the CLI does not ship throws
 * `UnknownPluginError` listing the ones it does: a registry of the enabled ones alone would list
 * "(none registered)" for `sandbox_backends = ["bwrp"]`.
 */
export function createCliSandboxRegistry(
  enabled?: readonly string[],
  options: ShippedBackendOptions = {},
): SandboxRegistry {
  const backends: Record<string, SandboxBackend> = {};
  for (const id of enabled ?? BACKEND_IDS) {
    if (!Object.hasOwn(SHIPPED, id))
      throw new UnknownPluginError({ kind: 'sandbox backend', id, available: BACKEND_IDS });
    backends[id] = shippedBackend(id, options);
  }
  return createSandboxRegistry(backends);
}
