import { join } from 'node:path';
import type { ToolPlan } from '@ux/features';
import type { ShellEnvironmentPolicy, UxEvent } from '@ux/protocol/core';
import { ensureUxRuntimeRoot, excludedByShellEnvironmentPolicy } from '@ux/protocol-utils';
import { ShellSnapshotCache } from '@ux/spawn';
import type { UnifiedExecOptions } from './create-unified-exec.js';
import { ShellSnapshots } from './shell-snapshots.js';

/** The session's shell snapshots when the plan asks for them (`shell_snapshot`); undefined otherwise. */
export function doorSnapshots(
  options: UnifiedExecOptions,
  plan: ToolPlan,
  emit: (event: UxEvent) => void,
): ShellSnapshots | undefined {
  if (!plan.shellSnapshot) return undefined;
  return new ShellSnapshots({
    dir:
      // ux's per-user runtime directory, which no sandbox can write: later commands source these.
      options.shellSnapshotDir ?? join(ensureUxRuntimeRoot(), 'shell-snapshots'),
    spawner: options.spawner,
    orchestrator: options.orchestrator,
    cwd: options.cwd,
    emit,
    ...(options.onWarning ? { onWarning: options.onWarning } : {}),
    ...(options.shellSnapshotTimeoutMs ? { timeoutMs: options.shellSnapshotTimeoutMs } : {}),
    excluded: excludedByShellEnvironmentPolicy(options.shellEnvironmentPolicy ?? options.environment),
    ...snapshotCacheOptions(
      options.shellSnapshotCache,
      options.shellEnvironmentPolicy ?? options.environment,
    ),
  });
}

/** The door's cross-process snapshot cache: the given one, none, or the runtime root's (none when unsafe). */
function snapshotCacheOptions(
  given: ShellSnapshotCache | false | undefined,
  environment: ShellEnvironmentPolicy | undefined,
): { cache?: ShellSnapshotCache; cacheContext?: string } {
  if (given === false) return {};
  let cache = given;
  if (!cache) {
    try {
      cache = new ShellSnapshotCache({ dir: join(ensureUxRuntimeRoot(), 'shell-snapshot-cache') });
    } catch {
      // An unsafe runtime root: sandboxed commands say so; snapshots are then per session.
      return {};
    }
  }
  return { cache, cacheContext: JSON.stringify(environment ?? null) };
}
