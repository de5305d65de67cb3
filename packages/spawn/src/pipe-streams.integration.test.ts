// What an exec-server needs from a local pipe process: the stream each chunk came from, and
// back-pressure (a paused process blocks once its pipe is full, and loses nothing).
import { runToEnd } from '@ux/protocol/testing';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createLocalSpawner } from './local-spawner.js';

const spawner = createLocalSpawner();
const PATH = '/usr/local/bin:/usr/bin:/bin';

// The host reaper starts with the first child and lives as long as this process: start it before
// the leak check's baseline.
beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

describe('pipe process streams', () => {
  it('names the stream of each chunk', async () => {
    const child = await spawner.spawn({
      argv: ['sh', '-c', 'printf out; sleep 0.1; printf err >&2'],
      cwd: '/',
      env: { PATH },
      tty: false,
      stdin: 'closed',
    });
    const seen: [string, string | undefined][] = [];
    child.onOutput((chunk, stream) => seen.push([Buffer.from(chunk).toString(), stream]));
    await runToEnd(child);
    expect(seen).toEqual([
      ['out', 'stdout'],
      ['err', 'stderr'],
    ]);
  });

  it('stops reading while paused, so the writer blocks, and delivers every byte after resuming', async () => {
    const bytes = 4 * 1024 * 1024;
    const child = await spawner.spawn({
      argv: ['sh', '-c', `head -c ${bytes} /dev/zero; echo done >&2`],
      cwd: '/',
      env: { PATH },
      tty: false,
      stdin: 'closed',
    });
    onTestFinished(() => child.terminate());
    let received = 0;
    child.onOutput((chunk) => {
      received += chunk.length;
    });
    child.pauseOutput?.();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // At most what the pipes and Node's read-ahead hold: far less than the 4 MiB it wants to write.
    expect(received).toBeLessThan(bytes / 2);
    expect(child.exitStatus()).toBeUndefined();
    child.resumeOutput?.();
    await child.closed;
    expect(received).toBe(bytes + 'done\n'.length);
  });
});
