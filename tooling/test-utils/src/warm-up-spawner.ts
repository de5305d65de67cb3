import type { Spawner } from '@ux/protocol';

/**
 * Runs `true` once through `spawner`, so that what its first spawn starts for the life of the process
 * (`@ux/spawn`'s host reaper) exists before a leak-check baseline is taken and is not counted as a leak.
 */
export async function warmUpSpawner(spawner: Spawner): Promise<void> {
  const child = await spawner.spawn({
    argv: ['true'],
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    tty: false,
    stdin: 'closed',
  });
  await child.closed;
}
