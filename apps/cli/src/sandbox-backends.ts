import { lazySandboxBackend } from '@ux/door';
import { type SandboxBackend, type SandboxHostContext, UnknownPluginError } from '@ux/protocol/core';
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

/** A loaded plugin's backend, created on first use (a probe or a plan), with its checked settings. */
export function pluginBackend(loaded: LoadedSandboxPlugin, host: SandboxHostContext = {}): SandboxBackend {
  return lazySandboxBackend(loaded.plugin, {
    settings: loaded.settings,
    host,
    source: loaded.source,
    fix: `check ${loaded.source}${loaded.settingsLocation ? ` and [sandbox.${loaded.plugin.id}]` : ''}`,
  });
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
