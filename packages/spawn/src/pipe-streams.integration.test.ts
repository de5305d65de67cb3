// What an exec-server needs from a local pipe process: the stream each chunk came from, and
// back-pressure (a paused process blocks once its pipe is full, and loses nothing).
import { readdirSync, readFileSync } from 'node:fs';
import { runToEnd } from '@ux/protocol-testing';
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

/** A process whose command line (NUL-separated) is `cmdline` sleeps in a write to a full pipe. */
function blockedWriters(cmdline: string): boolean {
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8') !== cmdline) continue;
      if (/pipe_write|sock_alloc_send|unix_stream_sendmsg/.test(readFileSync(`/proc/${name}/wchan`, 'utf8')))
        return true;
    } catch {
      // It ended while we looked.
    }
  }
  return false;
}

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
    // Until the writer blocks: `head` sleeps in a write to the full pipe.
    const writer = `head\0-c\0${bytes}\0/dev/zero\0`;
    const deadline = Date.now() + 15_000;
    while (!blockedWriters(writer) && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    expect(blockedWriters(writer)).toBe(true);
    // At most what the pipes and Node's read-ahead hold: far less than the 4 MiB it wants to write.
    expect(received).toBeLessThan(bytes / 2);
    expect(child.exitStatus()).toBeUndefined();
    child.resumeOutput?.();
    await child.closed;
    expect(received).toBe(bytes + 'done\n'.length);
  });
});
