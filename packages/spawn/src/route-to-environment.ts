import type { RoutedSpawnRequest, SpawnRouter } from './spawn-router.js';

/**
 * A starter for a session whose commands run in one configured remote environment: every request goes
 * through the router marked for that environment, so the router's exec-server spawner takes it (and,
 * without one, refuses it; nothing runs locally). Hand it to the door as its `spawner`.
 */
export function routeToEnvironment(router: SpawnRouter, environmentId: string): SpawnRouter {
  return {
    spawn: (request: RoutedSpawnRequest) =>
      router.spawn({ ...request, remoteEnvironment: request.remoteEnvironment ?? environmentId }),
  };
}
