import {
  type LaunchPlan,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxProbe,
} from '@ux/protocol/core';
import { type FsView, nodeFsView, privateTmpDir } from '@ux/protocol-utils';
import { classifySeatbeltDenial } from './classify-seatbelt-denial.js';
import { nodeSeatbeltProbeHost, probeSeatbelt, type SeatbeltProbeHost } from './probe-seatbelt.js';
import { planSeatbelt } from './seatbelt-plan.js';
import type { SeatbeltViolation } from './seatbelt-violation.js';
import type { SeatbeltViolationCollector } from './seatbelt-violation-collector.js';

export interface SeatbeltSandboxSettings {
  /** The file system the planner inspects; default the real one (`nodeFsView()`). */
  fs?: FsView;
  /** The ux host's environment, checked for an outer sandbox; default `process.env`. */
  hostEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * A started violation collector. Each plan then tags its denies, and the plan's cleanup hands the
   * command's violations to `onViolations`. Plans differ by their tag, so they are no longer identical.
   */
  violationCollector?: SeatbeltViolationCollector;
  /** Receives each command's violations after it exited (only with `violationCollector`). */
  onViolations?: (violations: SeatbeltViolation[], argv: readonly string[]) => void;
  /** What the probe asks of the host; default the real host. */
  probeHost?: SeatbeltProbeHost;
  /**
   * Where commands get their private temporary directory when the policy has a private `/tmp`
   * (`privateTmp`): a directory of this backend's own, made 0700 at the first plan that needs it and
   * removed by `close()`. It must not exist yet, and must lie outside every writable root (where no
   * sandbox can write its parent). Default: a new directory in ux's per-user runtime directory
   * (`createProcessRuntimeDir('seatbelt-tmp')`), which sessions hide from their commands
   * (`hostState.hidden`); this backend's own commands get this directory back.
   */
  privateTmpDir?: string;
}

/**
 * The macOS Seatbelt backend: plans commands under `/usr/bin/sandbox-exec` with a generated SBPL
 * profile. It never spawns; on other platforms it still plans (for tests) and its probe says why it
 * cannot run. It keeps one thing between plans: the private temporary directory of a policy with a
 * private `/tmp`, shared by this backend's commands and removed by `close()`.
 */
export function createSeatbeltSandbox(settings: SeatbeltSandboxSettings = {}): SandboxBackend {
  const fs = settings.fs ?? nodeFsView();
  const tmp = privateTmpDir(settings.privateTmpDir, 'seatbelt-tmp', 'seatbelt');
  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id: 'seatbelt',
    platforms: ['darwin'],
    async probe(): Promise<SandboxProbe> {
      try {
        return await probeSeatbelt(settings.probeHost ?? nodeSeatbeltProbeHost());
      } catch (error) {
        return { available: false, reason: `probe failed: ${String(error)}`, fix: 'report this as a ux bug' };
      }
    },
    async plan(request): Promise<LaunchPlan> {
      const collector = settings.violationCollector;
      const tag = collector?.newTag();
      const plan = planSeatbelt(request, {
        fs,
        hostEnv: settings.hostEnv ?? process.env,
        violationTag: tag,
        privateTmpDir: () => tmp.path(),
      });
      const launch: LaunchPlan = {
        argv: plan.argv,
        cwd: plan.cwd,
        env: plan.env,
        sandboxType: plan.sandboxType,
        enforcement: plan.enforcement,
      };
      if (collector && tag !== undefined && plan.profile !== '') {
        launch.cleanup = async () => {
          const violations = await collector.take(tag);
          settings.onViolations?.(violations, request.argv);
        };
      }
      return launch;
    },
    classifyDenial: classifySeatbeltDenial,
    // Removes the private temporary directory, if one was made; a later plan makes a new one.
    async close() {
      tmp.remove();
    },
  };
}
