export { type EarlyExit, waitForEarlyExit } from './early-exit.js';
export { exitStatusFrom } from './exit-status.js';
export { HeadTailBuffer } from './head-tail-buffer.js';
export { createLocalSpawner, type LocalSpawner, type LocalSpawnerSettings } from './local-spawner.js';
export { OutputTracker } from './output-tracker.js';
export * from './spawn-constants.js';
export { decideSpawnKind, type SpawnKind, type SpawnKindInput } from './spawn-kind.js';
export { createSpawnRouter, type RoutedSpawnRequest, type SpawnRouter } from './spawn-router.js';
