import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive } from '@ux/protocol-testing';
import { tempDir, useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { waitForEarlyExit } from './early-exit.js';
import { createLocalSpawner } from './local-spawner.js';
import { OutputTracker } from './output-tracker.js';

const spawner = createLocalSpawner();
const env = { PATH: '/usr/bin:/bin' };

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

async function start(script: string) {
  const child = await spawner.spawn({
    argv: ['/bin/sh', '-c', script],
    cwd: '/',
    env,
    tty: false,
    stdin: 'closed',
  });
  onTestFinished(() => child.terminate());
  return { child, tracker: new OutputTracker(child) };
}

/** The pids whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) found.push(Number(name));
    } catch {
      // It ended while we looked.
    }
  }
  return found;
}

async function waitUntil(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('waitForEarlyExit', () => {
  it('reports an exit inside the window with its output, leaving the buffer as it was', async () => {
    const { child, tracker } = await start('echo "touch: cannot touch x: Read-only file system" >&2; exit 1');
    const result = await waitForEarlyExit(child, tracker);
    expect(result).toMatchObject({ exited: true, status: { exitCode: 1 } });
    expect(result.exited && new TextDecoder().decode(result.output)).toBe(
      'touch: cannot touch x: Read-only file system\n',
    );
    expect(new TextDecoder().decode(tracker.buffer.drain())).toBe(
      'touch: cannot touch x: Read-only file system\n',
    );
  });

  it('reports a process that outlives the window as still running', async () => {
    const { child, tracker } = await start('exec sleep 600');
    expect(await waitForEarlyExit(child, tracker)).toEqual({ exited: false });
    // Still running, and so it was when the verdict came.
    expect(child.exitStatus()).toBeUndefined();
  });

  it('waits the whole window for an exit: one that comes late in it still counts', async () => {
    // The process exits when the test says so; with a ten-minute window, the wait must last until then.
    const dir = tempDir('ux-early-exit-');
    const go = join(dir, 'go');
    const { child, tracker } = await start(`while [ ! -e ${go} ]; do sleep 0.01; done; echo bye; exit 5`);
    let answered = false;
    const waiting = waitForEarlyExit(child, tracker, { graceMs: 600_000 }).finally(() => {
      answered = true;
    });
    // The shell is running its loop (its first sleep has started) and the wait has not answered.
    await waitUntil(() => child.pid !== undefined && childrenOf(child.pid).length > 0);
    expect(answered).toBe(false);
    writeFileSync(go, '');
    const result = await waiting;
    expect(result).toMatchObject({ exited: true, status: { exitCode: 5 } });
    expect(result.exited && new TextDecoder().decode(result.output)).toBe('bye\n');
  });

  it('waits for output that arrives just after the exit', async () => {
    // The grandchild writes after the shell has exited; the settle wait gives it its chance.
    const { child, tracker } = await start('(sleep 0.005; echo late) & exit 3');
    const result = await waitForEarlyExit(child, tracker, { settleMs: 1000 });
    expect(result).toMatchObject({ exited: true, status: { exitCode: 3 } });
    expect(result.exited && new TextDecoder().decode(result.output)).toBe('late\n');
  });

  it('counts an exit that happened before a stalled event loop let the window close', async () => {
    const { child, tracker } = await start('echo denied >&2; exit 1');
    const waiting = waitForEarlyExit(child, tracker);
    // Busy the loop past the window: the process exits meanwhile, and the window's timer expires
    // before the loop reaches the I/O that reports the exit.
    // The stall lasts until the window (150 ms) is over and the process has exited (however long a
    // loaded machine takes to run it; capped so that a broken spawn cannot hang the test).
    const pid = child.pid!;
    setImmediate(() => {
      const windowOver = Date.now() + 300;
      const cap = Date.now() + 30_000;
      while ((Date.now() < windowOver || isAlive(pid)) && Date.now() < cap) {}
    });
    expect(await waiting).toMatchObject({ exited: true, status: { exitCode: 1 } });
  });

  it('answers at once for a process that has already exited', async () => {
    const { child, tracker } = await start('exit 7');
    await child.closed;
    // With a ten-minute window, only an answer that does not wait for the window arrives in time.
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise((resolve) => {
      timer = setTimeout(resolve, 10_000, 'waited for the window');
    });
    const answer = await Promise.race([waitForEarlyExit(child, tracker, { graceMs: 600_000 }), waited]);
    clearTimeout(timer);
    expect(answer).toMatchObject({ exited: true, status: { exitCode: 7 } });
  });
});
