import { fileURLToPath } from 'node:url';
import {
  type LaunchPlan,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxProbe,
} from '@ux/protocol/core';
import { type FsView, nodeFsView, privateTmpDir } from '@ux/protocol-utils';
import { classifyWindowsDenial } from './classify-windows-denial.js';
import {
  nodeWindowsTokenProbeHost,
  probeWindowsToken,
  type WindowsTokenProbeHost,
} from './probe-windows-token.js';
import { planWindowsToken } from './windows-token-plan.js';

export interface WindowsTokenSandboxSettings {
  /** The file system the planner inspects; default the real one. */
  fs?: FsView;
  /** The node.exe that runs the launcher; default the current one (`process.execPath`). */
  nodePath?: string;
  /** The launcher script; default `windows-token-launcher.js` next to this package's build. */
  launcherPath?: string;
  /** Names the sandbox; with the writable roots it determines the capability SID. Default `default`. */
  sandboxId?: string;
  /** Keep the grants on writable roots between runs (default true: the next run skips re-propagating them). */
  persistGrants?: boolean;
  /** What the probe asks of the host; default the real host. */
  probeHost?: WindowsTokenProbeHost;
  /**
   * Where commands get their private temporary directory when the policy has a private `/tmp`
   * (`privateTmp`): a directory of this backend's own, made at the first plan that needs it and removed
   * by `close()`; it must not exist yet. Default: a new directory in ux's per-user runtime directory
   * (`createProcessRuntimeDir('windows-tmp')`, under `%TEMP%`). Each run grants it to its own run SID.
   */
  privateTmpDir?: string;
}

/** Where the built launcher lies: next to the bundled index (`dist/`). */
export function defaultLauncherPath(): string {
  return fileURLToPath(new URL('./windows-token-launcher.js', import.meta.url));
}

/**
 * The Windows restricted-token backend: plans commands to run through a small Node launcher that applies
 * the plan with the Win32 API (restricted token, ACLs, job object). It never spawns; on other platforms
 * it still plans (for tests) and its probe says why it cannot run. It keeps one thing between plans: the
 * private temporary directory of a policy with a private `/tmp`, removed by `close()`.
 */
export function createWindowsTokenSandbox(settings: WindowsTokenSandboxSettings = {}): SandboxBackend {
  const fs = settings.fs ?? nodeFsView();
  const launcherPath = settings.launcherPath ?? defaultLauncherPath();
  const tmp = privateTmpDir(settings.privateTmpDir, 'windows-tmp', 'windows-token');
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id: 'windows-token',
    platforms: ['win32'],
    async probe(): Promise<SandboxProbe> {
      try {
        return await probeWindowsToken(settings.probeHost ?? nodeWindowsTokenProbeHost(), launcherPath);
      } catch (error) {
        return { available: false, reason: `probe failed: ${String(error)}`, fix: 'report this as a ux bug' };
      }
    },
    async plan(request): Promise<LaunchPlan> {
      const plan = planWindowsToken(request, {
        fs,
        nodePath: settings.nodePath ?? process.execPath,
        launcherPath,
        sandboxId: settings.sandboxId,
        persistGrants: settings.persistGrants,
        privateTmpDir: () => tmp.path(),
      });
      return {
        argv: plan.argv,
        cwd: plan.cwd,
        env: plan.env,
        sandboxType: plan.sandboxType,
        enforcement: plan.enforcement,
      };
    },
    classifyDenial: classifyWindowsDenial,
    // Removes the private temporary directory, if one was made; a later plan makes a new one.
    async close() {
      tmp.remove();
    },
  };
}
