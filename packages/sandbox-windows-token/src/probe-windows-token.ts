import { existsSync } from 'node:fs';
import { release } from 'node:os';
import type { SandboxCapability, SandboxProbe } from '@ux/protocol/core';
import { loadKoffiWin32Api } from './koffi-win32-api.js';
import { DISABLE_MAX_PRIVILEGE, EVERYONE_SID, LUA_TOKEN, WRITE_RESTRICTED } from './win32-access.js';
import type { Win32Api } from './win32-api.js';

/**
 * What the restricted token enforces (README): writes only where an ACL grants its SID, protected names
 * kept read-only by deny entries. Not read-deny (a write-restricted token cannot deny a read, so ux's
 * hidden directories stay readable), not a private temporary directory (the command gets one, but the
 * host's stays readable), not the network (its block is advisory), not unix socket control, not process
 * isolation, not resource limits: a policy that needs one of those is refused on this backend.
 */
export const WINDOWS_TOKEN_ENFORCES: readonly SandboxCapability[] = ['write_limits', 'protected_names'];

/** What the probe asks of the host; the real one is `nodeWindowsTokenProbeHost()`. */
export interface WindowsTokenProbeHost {
  platform: NodeJS.Platform;
  exists(path: string): boolean;
  loadApi(): Promise<Win32Api>;
  osRelease(): string;
}

export function nodeWindowsTokenProbeHost(): WindowsTokenProbeHost {
  return {
    platform: process.platform,
    exists: existsSync,
    loadApi: () => loadKoffiWin32Api(),
    osRelease: release,
  };
}

/**
 * Whether the restricted-token sandbox can run here: Windows, the launcher script in place, koffi and the
 * Win32 functions loadable, and a write-restricted token creatable for this user. Never throws.
 */
export async function probeWindowsToken(
  host: WindowsTokenProbeHost,
  launcherPath: string,
): Promise<SandboxProbe> {
  if (host.platform !== 'win32') {
    return {
      available: false,
      reason: `not on this platform (the restricted-token sandbox needs Windows; this is ${host.platform})`,
      fix: 'use @ux/sandbox-bwrap on Linux or @ux/sandbox-seatbelt on macOS',
    };
  }
  if (!host.exists(launcherPath)) {
    return {
      available: false,
      reason: `the launcher ${launcherPath} is missing`,
      fix: 'build @ux/sandbox-windows-token (pnpm --filter @ux/sandbox-windows-token build) or reinstall it',
    };
  }
  let api: Win32Api;
  try {
    api = await host.loadApi();
  } catch (error) {
    return {
      available: false,
      reason: `the Win32 API could not be bound: ${error instanceof Error ? error.message : String(error)}`,
      fix: 'reinstall @ux/sandbox-windows-token so koffi installs its Windows binary',
    };
  }
  try {
    const token = api.openProcessToken();
    try {
      api.closeHandle(
        api.createRestrictedToken(token, DISABLE_MAX_PRIVILEGE | LUA_TOKEN | WRITE_RESTRICTED, [
          EVERYONE_SID,
        ]),
      );
    } finally {
      api.closeHandle(token);
    }
  } catch (error) {
    return {
      available: false,
      reason: `a restricted token could not be created: ${error instanceof Error ? error.message : String(error)}`,
      fix: 'run ux as a normal user session (services and some remote shells cannot restrict their token)',
    };
  }
  return {
    available: true,
    version: `Windows ${host.osRelease()}`,
    details: { fileSystem: 'enforced', network: 'advisory' },
    enforces: WINDOWS_TOKEN_ENFORCES,
  };
}
