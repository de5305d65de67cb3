import {
  type ExecProcess,
  SPAWNER_SPECIFICATION_VERSION,
  type Spawner,
  SpawnFailedError,
  type SpawnRequest,
} from '@ux/protocol/core';
import type { SpawnEscalation } from './spawn-escalation.js';
import { decideSpawnKind } from './spawn-kind.js';

/** A spawn request that also says where it runs. */
export interface RoutedSpawnRequest extends SpawnRequest {
  /** An escalation socket for the command (ZshFork); local commands only. */
  escalation?: SpawnEscalation;
  /** Id of the remote environment the command runs in, when it is not local. */
  remoteEnvironment?: string;
  /** The command needs a shell snapshot restored first. */
  shellSnapshot?: boolean;
}

export interface SpawnRouter {
  spawn(request: RoutedSpawnRequest): Promise<ExecProcess>;
}

/**
 * Sends local commands to the local spawner and remote ones (or those needing a shell snapshot) to the
 * exec-server spawner. Without an exec-server, such a command fails; it never runs locally instead.
 */
export function createSpawnRouter(spawners: { local: Spawner; execServer?: Spawner }): SpawnRouter {
  for (const spawner of [spawners.local, spawners.execServer]) {
    if (spawner && spawner.specificationVersion !== SPAWNER_SPECIFICATION_VERSION) {
      throw new TypeError(
        `spawner "${spawner.id}" speaks ${spawner.specificationVersion}, expected ${SPAWNER_SPECIFICATION_VERSION}`,
      );
    }
  }
  return {
    spawn(request) {
      const { remoteEnvironment, shellSnapshot, ...plain } = request;
      const kind = decideSpawnKind({ ...plain, remote: remoteEnvironment !== undefined, shellSnapshot });
      if (kind !== 'exec-server') return spawners.local.spawn(plain);
      if (plain.escalation) {
        // Exec interception needs the local broker; a remote command would run unintercepted.
        return Promise.reject(
          new SpawnFailedError({
            command: plain.argv,
            reason: 'exec interception (the zsh fork) works for local commands only; this one was not run',
          }),
        );
      }
      if (!spawners.execServer) {
        const why =
          remoteEnvironment !== undefined
            ? `no exec-server configured for remote environment "${remoteEnvironment}"`
            : 'no exec-server configured, and restoring a shell snapshot needs one';
        return Promise.reject(
          new SpawnFailedError({ command: plain.argv, reason: `${why}; the command was not run locally` }),
        );
      }
      return spawners.execServer.spawn(plain);
    },
  };
}
