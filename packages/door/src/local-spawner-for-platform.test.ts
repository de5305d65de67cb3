import { SandboxUnavailableError, UxError } from '@ux/protocol/errors';
import type { LocalSpawner, LocalSpawnerSettings, WindowsJobObjects } from '@ux/spawn';
import { describe, expect, it, vi } from 'vitest';
import { localSpawnerForPlatform } from './local-spawner-for-platform.js';

// Counts imports of the Windows plugin: the default loader must reach it on win32 only.
const plugin = vi.hoisted(() => ({
  imports: 0,
  jobObjects: { create: () => ({ assign() {}, terminate() {}, close() {} }) },
}));
vi.mock('@ux/sandbox-windows-token', () => {
  plugin.imports += 1;
  return { loadKoffiJobObjects: async () => plugin.jobObjects };
});

const fakeJobObjects: WindowsJobObjects = {
  create: () => ({ assign() {}, terminate() {}, close() {} }),
};

function recorder() {
  const seen: LocalSpawnerSettings[] = [];
  const spawner = { id: 'recorded' } as unknown as LocalSpawner;
  return {
    seen,
    spawner,
    createSpawner: (settings: LocalSpawnerSettings) => {
      seen.push(settings);
      return spawner;
    },
  };
}

describe('localSpawnerForPlatform', () => {
  it('on Linux: the POSIX spawner, with no job objects loaded and the Windows plugin never imported', async () => {
    const { seen, spawner, createSpawner } = recorder();
    const loadJobObjects = vi.fn(async () => fakeJobObjects);
    expect(await localSpawnerForPlatform({ platform: 'linux', loadJobObjects, createSpawner })).toBe(spawner);
    expect(await localSpawnerForPlatform({ platform: 'linux', createSpawner })).toBe(spawner);
    expect(seen).toEqual([{ platform: 'linux' }, { platform: 'linux' }]);
    expect(loadJobObjects).not.toHaveBeenCalled();
    expect(plugin.imports).toBe(0);
    // The real one, on this machine: the POSIX spawner (its reaper is started on the first spawn).
    const real = await localSpawnerForPlatform({ platform: 'linux' });
    expect(real.id).toBe('local');
    expect('treeKill' in real).toBe(false);
  });

  it("on win32: the loader's job objects reach the Windows spawner's settings", async () => {
    const { seen, createSpawner } = recorder();
    const loadJobObjects = vi.fn(async () => fakeJobObjects);
    await localSpawnerForPlatform({ platform: 'win32', loadJobObjects, createSpawner });
    expect(loadJobObjects).toHaveBeenCalledTimes(1);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.platform).toBe('win32');
    expect(seen[0]!.windows?.jobObjects).toBe(fakeJobObjects);
    expect(plugin.imports).toBe(0);
    // Through the real createLocalSpawner: the Windows spawner, ending trees through the job objects.
    const real = await localSpawnerForPlatform({ platform: 'win32', loadJobObjects });
    expect((real as LocalSpawner & { treeKill?: string }).treeKill).toBe('job-object');
  });

  it('on win32 by default: loadKoffiJobObjects of @ux/sandbox-windows-token, imported then', async () => {
    const { seen, createSpawner } = recorder();
    await localSpawnerForPlatform({ platform: 'win32', createSpawner });
    expect(plugin.imports).toBe(1);
    expect(seen[0]!.windows?.jobObjects).toBe(plugin.jobObjects);
  });

  it('on win32, job objects that cannot be loaded: a clear error, and no spawner', async () => {
    const { seen, createSpawner } = recorder();
    const cause = new SandboxUnavailableError({
      backend: 'windows-token',
      reason: 'koffi could not be loaded: Error: no binary',
      fix: 'reinstall @ux/sandbox-windows-token so koffi installs its Windows binary',
    });
    const error = await localSpawnerForPlatform({
      platform: 'win32',
      loadJobObjects: async () => {
        throw cause;
      },
      createSpawner,
    }).catch((caught: unknown) => caught);
    expect(UxError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'spawn_failed', cause });
    expect((error as Error).message).toBe(
      'Windows job objects are unavailable (koffi could not be loaded: Error: no binary; reinstall @ux/sandbox-windows-token so koffi installs its Windows binary): ux starts no command it could not end with everything the command started',
    );
    expect(seen).toEqual([]);
  });
});
