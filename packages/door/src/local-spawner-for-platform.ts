import { SandboxUnavailableError, UxError } from '@ux/protocol/errors';
import {
  createLocalSpawner,
  type LocalSpawner,
  type LocalSpawnerSettings,
  type WindowsJobObjects,
} from '@ux/spawn';

export interface LocalSpawnerForPlatformOptions {
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
  /**
   * Loads the Windows job objects (win32 only); default `loadKoffiJobObjects()` of
   * `@ux/sandbox-windows-token`, imported only then, so other platforms never load the plugin or koffi.
   */
  loadJobObjects?: () => Promise<WindowsJobObjects>;
  /** Default `createLocalSpawner` of `@ux/spawn`; tests hand in a recorder. */
  createSpawner?: (settings: LocalSpawnerSettings) => LocalSpawner;
}

/**
 * The CLI's local spawner. On Windows it is given kill-on-close job objects, so ending a command ends
 * its whole tree; when they cannot be loaded it rejects (a `UxError`, `spawn_failed`) rather than start
 * commands whose descendants it could not end. Elsewhere it is `createLocalSpawner()` as it was.
 */
export async function localSpawnerForPlatform(
  options: LocalSpawnerForPlatformOptions = {},
): Promise<LocalSpawner> {
  const platform = options.platform ?? process.platform;
  const createSpawner = options.createSpawner ?? createLocalSpawner;
  if (platform !== 'win32') return createSpawner({ platform });
  let jobObjects: WindowsJobObjects;
  try {
    jobObjects = await (options.loadJobObjects ?? loadKoffiJobObjects)();
  } catch (error) {
    const reason = SandboxUnavailableError.isInstance(error)
      ? `${error.reason}; ${error.fix}`
      : error instanceof Error
        ? error.message
        : String(error);
    throw new UxError(
      'spawn_failed',
      `Windows job objects are unavailable (${reason}): ux starts no command it could not end with everything the command started`,
      { cause: error },
    );
  }
  return createSpawner({ platform, windows: { jobObjects } });
}

/** The plugin's koffi job objects, typed as the spawner's port: a mismatch fails the typecheck here. */
async function loadKoffiJobObjects(): Promise<WindowsJobObjects> {
  return (await import('@ux/sandbox-windows-token')).loadKoffiJobObjects();
}
