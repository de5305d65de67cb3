export { closeSandboxRegistry } from './close-sandbox-registry.js';
export {
  createDoor,
  DEFAULT_DOOR_POLICY,
  type Door,
  type DoorCallContext,
  type DoorOptions,
} from './create-door.js';
export { type LazySandboxBackendOptions, lazySandboxBackend } from './lazy-sandbox-backend.js';
export {
  type LocalSpawnerForPlatformOptions,
  localSpawnerForPlatform,
} from './local-spawner-for-platform.js';
export { createPlatformSandboxRegistry, PLATFORM_SANDBOX_PLUGINS } from './platform-sandbox-registry.js';
