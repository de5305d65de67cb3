import {
  type LaunchPlan,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxHostContext,
  UnknownPluginError,
} from '@ux/protocol/core';
import { createSandboxRegistry, type SandboxRegistry } from '@ux/protocol-utils';
import { sandboxPlugin as bwrapPlugin } from '@ux/sandbox-bwrap/plugin';
import { sandboxPlugin as seatbeltPlugin } from '@ux/sandbox-seatbelt/plugin';
import { sandboxPlugin as windowsTokenPlugin } from '@ux/sandbox-windows-token/plugin';
import type { LoadedSandboxPlugin, LoadedSandboxPlugins } from './sandbox-plugins.js';

/**
 * The backends ux ships, as the package names a config would write, in preference order. They are
 * loaded by `loadSandboxPlugins` like any plugin named in `sandbox_plugins` (the same checks: export,
 * specificationVersion, id, platforms, settings schema); only their modules come from the CLI's bundle
 * instead of a file (each `…/plugin` module is small, and creates its backend on first use, so a Linux
 * host never evaluates the macOS or Windows code). A new backend needs no line here: it is a package
 * or file named in `sandbox_plugins`.
 */
export const SHIPPED_SANDBOX_PLUGINS: ReadonlyArray<readonly [string, () => unknown]> = [
  ['@ux/sandbox-bwrap', () => ({ sandboxPlugin: bwrapPlugin })],
  ['@ux/sandbox-seatbelt', () => ({ sandboxPlugin: seatbeltPlugin })],
  ['@ux/sandbox-windows-token', () => ({ sandboxPlugin: windowsTokenPlugin })],
];

/** A loaded plugin's backend, created on first use (a probe or a plan). */
export function pluginBackend(loaded: LoadedSandboxPlugin, host: SandboxHostContext = {}): SandboxBackend {
  const { plugin } = loaded;
  let created: SandboxBackend | undefined;
  let creating: Promise<SandboxBackend> | undefined;
  const backend = () => {
    creating ??= (async () => {
      const backend = await plugin.create(await loaded.settings, host);
      if (backend?.id !== plugin.id || backend.specificationVersion !== SANDBOX_SPECIFICATION_VERSION)
        throw new Error(
          `sandbox plugin ${loaded.source} created a backend with id ${JSON.stringify(backend?.id)} speaking ${JSON.stringify(backend?.specificationVersion)}; expected "${plugin.id}" speaking "${SANDBOX_SPECIFICATION_VERSION}"`,
        );
      created = backend;
      return backend;
    })();
    return creating;
  };
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id: plugin.id,
    platforms: plugin.platforms,
    probe: async () => {
      try {
        return await (await backend()).probe();
      } catch (error) {
        return {
          available: false,
          reason: `the ${plugin.id} backend could not be created: ${(error as Error).message}`,
          fix: `check ${loaded.source}${loaded.settingsLocation ? ` and [sandbox.${plugin.id}]` : ''}`,
        };
      }
    },
    plan: async (request): Promise<LaunchPlan> => (await backend()).plan(request),
    // Denials are classified after a plan ran, so by then the backend exists.
    classifyDenial: (evidence) => created?.classifyDenial?.(evidence) ?? 'unknown',
    // A backend still being created (a probe under way) is closed once it exists.
    close: async () => {
      if (creating) await (await creating.catch(() => undefined))?.close?.();
    },
  };
}

/**
 * The registry the CLI hands to the orchestrator and the exec-server: the loaded backends that
 * configuration and requirements enable (all of them when `enabled` is not given), in the order of
 * `enabled`. An id no loaded plugin has throws `UnknownPluginError` listing the loaded ones.
 */
export function createCliSandboxRegistry(
  loaded: LoadedSandboxPlugins,
  enabled?: readonly string[],
  host: SandboxHostContext = {},
): SandboxRegistry {
  const ids = loaded.plugins.map((plugin) => plugin.id);
  const backends: Record<string, SandboxBackend> = {};
  for (const id of enabled ?? ids) {
    const plugin = loaded.plugins.find((candidate) => candidate.id === id);
    if (!plugin) throw new UnknownPluginError({ kind: 'sandbox backend', id, available: ids });
    backends[id] = pluginBackend(plugin, host);
  }
  return createSandboxRegistry(backends);
}
