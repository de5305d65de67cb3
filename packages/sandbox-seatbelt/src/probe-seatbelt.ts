import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { release } from 'node:os';
import type { SandboxCapability, SandboxProbe } from '@ux/protocol/core';
import { outerSandboxMarker } from './outer-sandbox.js';
import { SANDBOX_EXEC_PATH } from './seatbelt-plan.js';

/**
 * What Seatbelt's profiles enforce (README): writes only in the writable roots, protected names and
 * their parents, deny-read and ux's hidden directories, the network off or only to the host's proxy, the
 * listed unix sockets and no other, a private temporary directory. Not process isolation (the command
 * sees the user's other processes) and not resource limits.
 */
export const SEATBELT_ENFORCES: readonly SandboxCapability[] = [
  'write_limits',
  'protected_names',
  'read_deny',
  'network_off',
  'network_by_domain',
  'unix_socket_control',
  'private_tmp',
];

/** What the probe asks of the host; the real one is `nodeSeatbeltProbeHost()`. */
export interface SeatbeltProbeHost {
  platform: NodeJS.Platform;
  env: Readonly<Record<string, string | undefined>>;
  exists(path: string): boolean;
  /** Runs a program and reports its exit code (null when killed) and merged output. */
  run(
    file: string,
    args: readonly string[],
    timeoutMs: number,
  ): Promise<{ exitCode: number | null; output: string }>;
  /** The OS release shown as the version (`uname -r`). */
  osRelease(): string;
}

export function nodeSeatbeltProbeHost(): SeatbeltProbeHost {
  return {
    platform: process.platform,
    env: process.env,
    exists: (path) => existsSync(path),
    run: (file, args, timeoutMs) =>
      new Promise((resolve) => {
        execFile(file, [...args], { timeout: timeoutMs }, (error, stdout, stderr) => {
          const code = (error as { code?: unknown } | null)?.code;
          resolve({
            exitCode: error ? (typeof code === 'number' ? code : null) : 0,
            output: `${stdout}${stderr}`,
          });
        });
      }),
    osRelease: () => release(),
  };
}

const OTHER_BACKENDS = 'use @ux/sandbox-bwrap on Linux or @ux/sandbox-windows-token on Windows';

/**
 * Whether Seatbelt can run here: macOS, `/usr/bin/sandbox-exec` present, not already inside a sandbox
 * (checked by marker variables and by applying a trivial profile, which fails when nested). Never throws.
 */
export async function probeSeatbelt(host: SeatbeltProbeHost): Promise<SandboxProbe> {
  if (host.platform !== 'darwin') {
    return {
      available: false,
      reason: `not on this platform (Seatbelt needs macOS; this is ${host.platform})`,
      fix: OTHER_BACKENDS,
    };
  }
  if (!host.exists(SANDBOX_EXEC_PATH)) {
    return {
      available: false,
      reason: `${SANDBOX_EXEC_PATH} is missing`,
      fix: 'sandbox-exec ships with macOS; restore it (reinstall or update macOS)',
    };
  }
  const outer = outerSandboxMarker(host.env);
  if (outer !== undefined) {
    return {
      available: false,
      reason: `already inside a sandbox (${outer}); macOS cannot nest sandbox-exec`,
      fix: 'run ux outside the outer sandbox, or use the external-sandbox policy',
    };
  }
  let trial: { exitCode: number | null; output: string };
  try {
    trial = await host.run(
      SANDBOX_EXEC_PATH,
      ['-p', '(version 1)(allow default)', '--', '/usr/bin/true'],
      5000,
    );
  } catch (error) {
    trial = { exitCode: null, output: String(error) };
  }
  if (trial.exitCode === 0) {
    return {
      available: true,
      version: `macOS kernel ${host.osRelease()}`,
      details: { executable: SANDBOX_EXEC_PATH },
      enforces: SEATBELT_ENFORCES,
    };
  }
  if (/sandbox_apply/.test(trial.output)) {
    return {
      available: false,
      reason: `already inside a sandbox: ${trial.output.trim()}`,
      fix: 'run ux outside the outer sandbox, or use the external-sandbox policy',
    };
  }
  return {
    available: false,
    reason: `sandbox-exec failed a trivial profile (exit ${trial.exitCode ?? 'killed'}): ${trial.output.trim() || 'no output'}`,
    fix: 'check that /usr/bin/sandbox-exec runs for this user',
  };
}
