import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { expectNoLeaks, snapshotProcess } from './leak-check.js';

describe('leak check', () => {
  it('names a child process that outlives the baseline, and passes once it is gone', async () => {
    const baseline = snapshotProcess();
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    await expect(expectNoLeaks(baseline, 200)).rejects.toThrow(
      `process ${child.pid} still running: sleep 30`,
    );
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('exit', resolve));
    await expectNoLeaks(baseline, 2_000);
  });

  it('names a socket left open, and passes once it is closed', async () => {
    const baseline = snapshotProcess();
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    await expect(expectNoLeaks(baseline, 200)).rejects.toThrow(/fd \d+ still open: socket:/);
    await new Promise((resolve) => server.close(resolve));
    await expectNoLeaks(baseline, 2_000);
  });
});
