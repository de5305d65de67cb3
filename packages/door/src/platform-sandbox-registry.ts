import type { SandboxHostContext, SandboxPlugin } from '@ux/protocol/core';
import { createSandboxRegistry, type SandboxRegistry } from '@ux/protocol-utils';
import { sandboxPlugin as bwrap } from '@ux/sandbox-bwrap/plugin';
import { sandboxPlugin as landlock } from '@ux/sandbox-landlock';
import { sandboxPlugin as seatbelt } from '@ux/sandbox-seatbelt/plugin';
import { sandboxPlugin as windowsToken } from '@ux/sandbox-windows-token/plugin';
import { lazySandboxBackend } from './lazy-sandbox-backend.js';

/**
 * The backends ux ships, in preference order: bubblewrap, else Landlock on Linux; Seatbelt on macOS;
 * the restricted token on Windows. Which one runs is the orchestrator's one selection (the first
 * that runs here and enforces what the policy needs), never this list's.
 */
export const PLATFORM_SANDBOX_PLUGINS: readonly SandboxPlugin<unknown>[] = [
  bwrap as SandboxPlugin<unknown>,
  landlock as SandboxPlugin<unknown>,
  seatbelt as SandboxPlugin<unknown>,
  windowsToken as SandboxPlugin<unknown>,
];

/**
 * A registry of the shipped backends made for `platform`, each created on first use with default
 * settings. The caller owns it: close it with `closeSandboxRegistry` when done.
 */
export function createPlatformSandboxRegistry(
  options: { platform?: NodeJS.Platform; host?: SandboxHostContext } = {},
): SandboxRegistry {
  const platform = options.platform ?? process.platform;
  const backends = Object.fromEntries(
    PLATFORM_SANDBOX_PLUGINS.filter((plugin) => plugin.platforms.includes(platform)).map((plugin) => [
      plugin.id,
      lazySandboxBackend(plugin, {
        ...(options.host ? { host: options.host } : {}),
        source: `shipped with ux (@ux/sandbox-${plugin.id})`,
      }),
    ]),
  );
  return createSandboxRegistry(backends);
}
