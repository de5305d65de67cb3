// The door's cross-process snapshot cache, with doors standing in for separate ux
// processes: a second door with the same shell, home, directory and policy sources the first one's
// capture (the login file ran once); a door whose environment policy keeps more names out captures
// its own and never exports what its policy drops.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ShellSnapshotCache } from '@ux/spawn';
import { tempDir, useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeDoor, parseReceipt, spawner } from '../test/test-support.js';

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

function countingHome(): string {
  const home = tempDir('ux-cache-home-');
  writeFileSync(join(home, '.bashrc'), 'echo x >> "$HOME/rc-runs"\nexport FROM_RC=set-by-rc\n');
  writeFileSync(join(home, '.bash_profile'), '. "$HOME/.bashrc"\n');
  return home;
}

const runs = (home: string) =>
  existsSync(join(home, 'rc-runs')) ? readFileSync(join(home, 'rc-runs'), 'utf8').split('\n').length - 1 : 0;

describe('the door with a snapshot cache', () => {
  it('a second door reuses the capture; another environment policy captures its own', async () => {
    const home = countingHome();
    const cwd = tempDir('ux-cache-cwd-');
    const cache = new ShellSnapshotCache({ dir: join(tempDir('ux-cache-'), 'cache') });
    const open = (environment?: { exclude: string[] }) =>
      makeDoor({
        flags: { shell_snapshot: true },
        door: {
          cwd,
          baseEnvironment: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
          shellSnapshotCache: cache,
          shellSnapshotTimeoutMs: 60_000,
          ...(environment ? { environment } : {}),
        },
      }).door;
    const echo = async (door: ReturnType<typeof open>, id: string) =>
      parseReceipt(
        (await door.execCommand({ cmd: 'echo "[$FROM_RC]"', yield_time_ms: 30_000 }, { callId: id })).text,
      );

    const first = open();
    expect(await echo(first, 'a')).toMatchObject({ exitCode: 0, output: '[set-by-rc]\n' });
    await first.shutdown();
    expect(runs(home)).toBe(1);

    const second = open();
    expect(await echo(second, 'b')).toMatchObject({ exitCode: 0, output: '[set-by-rc]\n' });
    await second.shutdown();
    expect(runs(home)).toBe(1);

    const stricter = open({ exclude: ['FROM_RC'] });
    expect(await echo(stricter, 'c')).toMatchObject({ exitCode: 0, output: '[]\n' });
    await stricter.shutdown();
    expect(runs(home)).toBe(2);
  }, 60_000);
});
