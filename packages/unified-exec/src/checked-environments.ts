import { UxError } from '@ux/protocol/core';
import type { UnifiedExecOptions } from './create-unified-exec.js';
import type { DoorEnvironment } from './door-environments.js';
import { remoteEnvironmentPolicyProblem } from './remote-environment-policy-problem.js';

/** The door's environments, checked once: a mistake here is the host's, and is thrown at creation. */
export function checkedEnvironments(
  options: Pick<
    UnifiedExecOptions,
    'environments' | 'localEnvironment' | 'defaultEnvironment' | 'orchestrator'
  >,
): {
  remote: ReadonlyMap<string, DoorEnvironment>;
  local: boolean;
  default: string | undefined;
  ids: string[];
  count: number;
} {
  const remote = new Map(Object.entries(options.environments ?? {}));
  const local = options.localEnvironment ?? true;
  if (remote.has('local'))
    throw new TypeError('"local" is this machine; a remote environment needs another id');
  for (const [id, environment] of remote) {
    if (typeof environment?.spawner?.spawn !== 'function')
      throw new TypeError(`environment "${id}" needs a spawner (createExecServerSpawner)`);
    if (environment.cwd !== undefined && !environment.cwd.startsWith('/'))
      throw new TypeError(`environment "${id}": cwd must be an absolute path, got "${environment.cwd}"`);
  }
  const ids = [...(local ? ['local'] : []), ...remote.keys()];
  const chosen =
    options.defaultEnvironment ?? (local ? 'local' : remote.size === 1 ? [...remote.keys()][0] : undefined);
  if (chosen !== undefined && !ids.includes(chosen))
    throw new TypeError(
      `default environment "${chosen}" is not one of this door's: ${ids.join(', ') || '(none)'}`,
    );
  // The same decision as ux's (`sessionEffectivePolicy`): what a remote server cannot apply is refused
  // before anything runs, not dropped.
  const problem =
    chosen !== undefined && remote.has(chosen)
      ? remoteEnvironmentPolicyProblem(options.orchestrator.policy, chosen)
      : undefined;
  if (problem) throw new UxError('invalid_arguments', problem);
  return { remote, local, default: chosen, ids, count: ids.length };
}
