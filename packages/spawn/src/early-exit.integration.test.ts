import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
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
    const { child, tracker } = await start('sleep 1');
    const started = Date.now();
    expect(await waitForEarlyExit(child, tracker)).toEqual({ exited: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
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
    setImmediate(() => {
      const until = Date.now() + 300;
      while (Date.now() < until) {}
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
