import {
  type ExecProcess,
  SPAWNER_SPECIFICATION_VERSION,
  type Spawner,
  SpawnFailedError,
  type SpawnRequest,
} from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import { createSpawnRouter } from './spawn-router.js';

/** Records what it was asked to start; the router under test only chooses between spawners. */
function recorder(id: string) {
  const calls: SpawnRequest[] = [];
  const spawner: Spawner = {
    specificationVersion: SPAWNER_SPECIFICATION_VERSION,
    id,
    spawn: async (request) => {
      calls.push(request);
      return { pid: 1 } as ExecProcess;
    },
  };
  return { spawner, calls };
}

const request: SpawnRequest = { argv: ['echo', 'hi'], cwd: '/tmp', env: {}, tty: false, stdin: 'closed' };

describe('createSpawnRouter', () => {
  it('sends local commands to the local spawner, without routing fields', async () => {
    const local = recorder('local');
    const remote = recorder('exec-server');
    await createSpawnRouter({ local: local.spawner, execServer: remote.spawner }).spawn({
      ...request,
      tty: true,
    });
    expect(local.calls).toEqual([{ ...request, tty: true }]);
    expect(remote.calls).toEqual([]);
  });

  it('sends remote commands and shell-snapshot commands to the exec-server', async () => {
    const local = recorder('local');
    const remote = recorder('exec-server');
    const router = createSpawnRouter({ local: local.spawner, execServer: remote.spawner });
    await router.spawn({ ...request, remoteEnvironment: 'box' });
    await router.spawn({ ...request, shellSnapshot: true });
    expect(remote.calls).toEqual([request, request]);
    expect(local.calls).toEqual([]);
  });

  it('refuses a remote command without an exec-server and never runs it locally', async () => {
    const local = recorder('local');
    const router = createSpawnRouter({ local: local.spawner });
    const remote = router.spawn({ ...request, remoteEnvironment: 'box' });
    await expect(remote).rejects.toThrow(
      'failed to start echo: no exec-server configured for remote environment "box"; the command was not run locally',
    );
    await expect(router.spawn({ ...request, shellSnapshot: true })).rejects.toSatisfy(
      SpawnFailedError.isInstance,
    );
    expect(local.calls).toEqual([]);
  });

  it('refuses a spawner of another specification version', () => {
    const bad = { ...recorder('old').spawner, specificationVersion: 'ux-spawner-v0' } as unknown as Spawner;
    expect(() => createSpawnRouter({ local: bad })).toThrow(
      'spawner "old" speaks ux-spawner-v0, expected ux-spawner-v1',
    );
  });
});
