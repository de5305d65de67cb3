import {
  type EffectivePolicy,
  InvalidArgumentsError,
  type SandboxBackend,
  SandboxUnavailableError,
} from '@ux/protocol/core';
import { probeSafely } from '@ux/protocol-utils';
import type { SandboxSelector } from '../sandbox/sandbox-selector.js';
import type { SelectedSandbox } from './attempt.js';

/** The sandbox for a request's execution environment: this machine's backends, or the remote one's. */
export interface EnvironmentSandboxPicker {
  /** Throws `InvalidArgumentsError` for an environment id without a sandbox, listing the known ones. */
  assertKnown(environmentId: string | undefined): void;
  /**
   * Local (`undefined`): the first registered backend that enforces everything `policy` needs (fail
   * closed). Remote: that environment's backend, probed now (a live connection: an environment down
   * now may be back later); the exec-server there applies the same rule to the policy it is sent.
   */
  pick(environmentId: string | undefined, policy: EffectivePolicy): Promise<Omit<SelectedSandbox, 'policy'>>;
}

export function createEnvironmentSandboxPicker(options: {
  local: SandboxSelector;
  environmentSandboxes: Readonly<Record<string, SandboxBackend>>;
}): EnvironmentSandboxPicker {
  const { local, environmentSandboxes } = options;
  return {
    assertKnown(environmentId) {
      if (environmentId === undefined || environmentSandboxes[environmentId]) return;
      const known = Object.keys(environmentSandboxes);
      throw new InvalidArgumentsError({
        tool: 'orchestrator',
        issues: [
          {
            path: 'environment',
            message: `unknown environment "${environmentId}"; known remote environments: ${known.join(', ') || '(none)'}`,
          },
        ],
      });
    },
    async pick(environmentId, policy) {
      if (environmentId === undefined) return local.choose(policy);
      const backend = environmentSandboxes[environmentId]!;
      const probe = await probeSafely(backend);
      if (probe.available) return { backend, ...(probe.enforces ? { enforces: probe.enforces } : {}) };
      throw new SandboxUnavailableError({
        backend: backend.id,
        // The probe's reason usually names the environment already ("cannot reach environment …").
        reason: probe.reason.includes(`environment "${environmentId}"`)
          ? probe.reason
          : `environment "${environmentId}": ${probe.reason}`,
        fix: probe.fix,
      });
    },
  };
}
