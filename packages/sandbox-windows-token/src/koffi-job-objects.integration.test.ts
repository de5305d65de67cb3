import { spawn } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadKoffiJobObjects } from './koffi-job-objects.js';

// Real job objects through koffi: Windows only, reported as skipped elsewhere. Not run yet (see the
// README's "Not run on Windows").
const onWindows = process.platform === 'win32';

describe('loadKoffiJobObjects on Windows', () => {
  it.skipIf(!onWindows)(
    'ends a process and the child it started with TerminateJobObject (needs Windows)',
    async () => {
      const jobs = await loadKoffiJobObjects();
      // A node that starts a second node and prints its pid; both would live a minute.
      const script =
        "const c=require('child_process').spawn(process.execPath,['-e','setTimeout(()=>{},60000)'],{stdio:'ignore'});" +
        'console.log(c.pid);setTimeout(()=>{},60000)';
      const job = jobs.create();
      onTestFinished(() => job.close());
      const parent = spawn(process.execPath, ['-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
        windowsHide: true,
      });
      await new Promise((resolve) => parent.once('spawn', resolve));
      job.assign(parent.pid!);
      const grandchild = Number(
        await new Promise<string>((resolve) =>
          parent.stdout!.once('data', (chunk) => resolve(String(chunk))),
        ),
      );
      const exited = new Promise<number | null>((resolve) => parent.once('exit', (code) => resolve(code)));
      job.terminate(1);
      expect(await exited).toBe(1);
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(() => process.kill(grandchild, 0)).toThrow();
    },
  );

  it.skipIf(!onWindows)(
    'ends what is left in a job when the job is closed (kill-on-close) (needs Windows)',
    async () => {
      const jobs = await loadKoffiJobObjects();
      const job = jobs.create();
      const child = spawn(process.execPath, ['-e', 'setTimeout(()=>{},60000)'], {
        stdio: 'ignore',
        windowsHide: true,
      });
      await new Promise((resolve) => child.once('spawn', resolve));
      job.assign(child.pid!);
      const exited = new Promise((resolve) => child.once('exit', resolve));
      job.close();
      await exited;
    },
  );
});
