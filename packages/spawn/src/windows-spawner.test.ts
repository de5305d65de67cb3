import type { ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import { SpawnFailedError, StdinClosedError } from '@ux/protocol/core';
import { describe, expect, it } from 'vitest';
import { WINDOWS_TEST_ENV, WINDOWS_TEST_FS } from '../test/windows-test-fs.js';
import { createLocalSpawner } from './local-spawner.js';
import type { LocalSpawnRequest } from './spawn-escalation.js';
import { STATUS_CONTROL_C_EXIT } from './windows-exit-status.js';
import type { WindowsJobObjects } from './windows-job-objects.js';
import type { WindowsPty } from './windows-pty-process.js';
import type { WindowsPipeSpawnOptions, WindowsPtySpawnOptions } from './windows-spawn-plan.js';
import { createWindowsSpawner, type WindowsSpawnerSettings } from './windows-spawner.js';

// These drive the Windows spawner against recording fakes of child_process, node-pty and the job-object
// port. They check what the spawner hands those and how it reads what comes back; they do not show that
// it works on Windows (see "Not run on Windows" in the README).

const request: LocalSpawnRequest = {
  argv: ['cmd.exe', '/d', '/c', 'echo hi'],
  cwd: 'C:\\work',
  env: WINDOWS_TEST_ENV,
  tty: false,
  stdin: 'pipe',
};

class FakeChild extends EventEmitter {
  readonly pid = 4242;
  readonly stdin = new PassThrough();
  readonly stdout = new PassThrough();
  readonly stderr = new PassThrough();
  readonly kills: (string | undefined)[] = [];
  kill(signal?: string) {
    this.kills.push(signal);
    return true;
  }
  /** Exits the way libuv reports it, then closes the pipes. */
  finish(code: number | null, signal: string | null = null) {
    this.emit('exit', code, signal);
    this.stdout.end();
    this.stderr.end();
    setImmediate(() => this.emit('close', code, signal));
  }
}

class FakePty implements WindowsPty {
  readonly pid = 5151;
  readonly writes: string[] = [];
  readonly resizes: [number, number][] = [];
  kills = 0;
  private dataListeners: ((data: string) => void)[] = [];
  private exitListeners: ((event: { exitCode: number }) => void)[] = [];
  onData(listener: (data: string) => void) {
    this.dataListeners.push(listener);
    return { dispose() {} };
  }
  onExit(listener: (event: { exitCode: number }) => void) {
    this.exitListeners.push(listener);
    return { dispose() {} };
  }
  write(data: string | Buffer) {
    this.writes.push(data.toString());
  }
  resize(cols: number, rows: number) {
    this.resizes.push([cols, rows]);
  }
  kill() {
    this.kills += 1;
  }
  data(text: string) {
    for (const listener of this.dataListeners) listener(text);
  }
  exit(exitCode: number) {
    for (const listener of this.exitListeners) listener({ exitCode });
  }
}

function recordingJobs(failAssign = false): { jobs: WindowsJobObjects; calls: string[] } {
  const calls: string[] = [];
  let next = 0;
  return {
    calls,
    jobs: {
      create() {
        const id = ++next;
        calls.push(`create job${id}`);
        return {
          assign(pid) {
            calls.push(`assign job${id} ${pid}`);
            if (failAssign) throw new Error('AssignProcessToJobObject failed with Win32 error 5');
          },
          terminate(exitCode) {
            calls.push(`terminate job${id} ${exitCode}`);
          },
          close() {
            calls.push(`close job${id}`);
          },
        };
      },
    },
  };
}

function setup(settings: Partial<WindowsSpawnerSettings> = {}) {
  const children: FakeChild[] = [];
  const ptys: FakePty[] = [];
  const pipeCalls: [string, readonly string[], WindowsPipeSpawnOptions][] = [];
  const ptyCalls: [string, string, WindowsPtySpawnOptions][] = [];
  const spawner = createWindowsSpawner({
    pathKind: WINDOWS_TEST_FS,
    pipeSpawn(file, args, options) {
      pipeCalls.push([file, args, options]);
      const child = new FakeChild();
      children.push(child);
      process.nextTick(() => child.emit('spawn'));
      return child as unknown as ChildProcess;
    },
    ptySpawn(file, args, options) {
      ptyCalls.push([file, args, options]);
      const pty = new FakePty();
      ptys.push(pty);
      return pty;
    },
    ...settings,
  });
  return { spawner, children, ptys, pipeCalls, ptyCalls };
}

describe('createWindowsSpawner (fakes of child_process, node-pty and Win32)', () => {
  it('starts a pipe child as planned, puts it in a job, merges its output, and closes the job after', async () => {
    const { jobs, calls } = recordingJobs();
    const { spawner, children, pipeCalls } = setup({ jobObjects: jobs });
    expect(spawner.treeKill).toBe('job-object');
    const child = await spawner.spawn(request);
    expect(pipeCalls).toEqual([
      [
        'C:\\Windows\\System32\\cmd.exe',
        ['/d', '/c', 'echo hi'],
        {
          cwd: 'C:\\work',
          env: WINDOWS_TEST_ENV,
          argv0: 'cmd.exe',
          windowsHide: true,
          windowsVerbatimArguments: false,
          detached: false,
          shell: false,
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      ],
    ]);
    expect(calls).toEqual(['create job1', 'assign job1 4242']);
    const fake = children[0]!;
    const seen: string[] = [];
    child.onOutput((chunk, stream) => seen.push(`${stream}:${Buffer.from(chunk).toString()}`));
    fake.stdout.write('a');
    await new Promise((resolve) => setImmediate(resolve));
    fake.stderr.write('b');
    await new Promise((resolve) => setImmediate(resolve));
    await child.write('typed');
    expect(fake.stdin.read()?.toString()).toBe('typed');
    fake.finish(3);
    expect(await child.exited).toEqual({ exitCode: 3 });
    await child.closed;
    expect(seen).toEqual(['stdout:a', 'stderr:b']);
    expect(calls).toEqual(['create job1', 'assign job1 4242', 'close job1']);
    // After the job is closed nothing is ended twice.
    await child.terminate();
    expect(calls.at(-1)).toBe('close job1');
    await expect(child.write('late')).rejects.toThrow(StdinClosedError);
  });

  it('terminates the whole job (137, SIGKILL) and interrupts with STATUS_CONTROL_C_EXIT (130, SIGINT)', async () => {
    const { jobs, calls } = recordingJobs();
    const { spawner, children } = setup({ jobObjects: jobs });
    const killed = await spawner.spawn(request);
    await killed.terminate();
    expect(calls.at(-1)).toBe('terminate job1 1');
    children[0]!.finish(1);
    expect(await killed.exited).toEqual({ exitCode: 137, signal: 'SIGKILL' });

    const interrupted = await spawner.spawn({ ...request, stdin: 'closed' });
    await interrupted.interrupt();
    expect(calls.at(-1)).toBe(`terminate job2 ${STATUS_CONTROL_C_EXIT}`);
    children[1]!.finish(STATUS_CONTROL_C_EXIT);
    expect(await interrupted.exited).toEqual({ exitCode: 130, signal: 'SIGINT' });
    await expect(interrupted.write('x')).rejects.toThrow(StdinClosedError);
    expect(children[0]!.kills).toEqual([]);
  });

  it('without job objects ends only the child itself', async () => {
    const { spawner, children } = setup();
    expect(spawner.treeKill).toBe('direct-child');
    const child = await spawner.spawn(request);
    await child.terminate();
    expect(children[0]!.kills).toEqual([undefined]);
    children[0]!.finish(null, 'SIGTERM');
    expect(await child.exited).toEqual({ exitCode: 143, signal: 'SIGTERM' });
  });

  it('starts a PTY on ConPTY as planned; interrupt is Ctrl-C typed into it; output arrives as UTF-8 bytes', async () => {
    const { jobs, calls } = recordingJobs();
    const { spawner, ptys, ptyCalls } = setup({ jobObjects: jobs });
    const child = await spawner.spawn({ ...request, tty: true, size: { rows: 40, cols: 120 } });
    expect(ptyCalls).toEqual([
      [
        'C:\\Windows\\System32\\cmd.exe',
        '/d /c "echo hi"',
        {
          cols: 120,
          rows: 40,
          cwd: 'C:\\work',
          env: WINDOWS_TEST_ENV,
          useConpty: true,
          useConptyDll: false,
          conptyInheritCursor: false,
        },
      ],
    ]);
    expect(calls).toEqual(['create job1', 'assign job1 5151']);
    const pty = ptys[0]!;
    pty.data('früh ');
    const chunks: Buffer[] = [];
    child.onOutput((chunk) => chunks.push(Buffer.from(chunk)));
    pty.data('spät');
    await child.write('dir\r');
    await child.interrupt();
    child.resize?.({ rows: 50, cols: 132 });
    expect(pty.writes).toEqual(['dir\r', '\x03']);
    expect(pty.resizes).toEqual([[132, 50]]);
    expect(() => child.resize?.({ rows: 0, cols: 10 })).toThrow(/rows and cols/);
    pty.exit(STATUS_CONTROL_C_EXIT);
    expect(await child.exited).toEqual({ exitCode: 130, signal: 'SIGINT' });
    await child.closed;
    expect(Buffer.concat(chunks).toString('utf8')).toBe('früh spät');
    expect(calls.at(-1)).toBe('close job1');
    await expect(child.write('x')).rejects.toThrow(StdinClosedError);
    await child.interrupt();
    expect(pty.writes).toHaveLength(2);
  });

  it('terminates a PTY through its job, or by killing the pseudo console without one', async () => {
    const withJob = recordingJobs();
    const a = setup({ jobObjects: withJob.jobs });
    const jobbed = await a.spawner.spawn({ ...request, tty: true });
    await jobbed.terminate();
    expect(withJob.calls.at(-1)).toBe('terminate job1 1');
    expect(a.ptys[0]!.kills).toBe(0);
    a.ptys[0]!.exit(1);
    expect(await jobbed.exited).toEqual({ exitCode: 137, signal: 'SIGKILL' });

    const b = setup();
    const bare = await b.spawner.spawn({ ...request, tty: true });
    await bare.terminate();
    expect(b.ptys[0]!.kills).toBe(1);
  });

  it('ends a child that cannot be put in its job, and fails the spawn saying why', async () => {
    const { jobs, calls } = recordingJobs(true);
    const { spawner, children } = setup({ jobObjects: jobs });
    const error = await spawner.spawn(request).catch((caught: unknown) => caught);
    expect(SpawnFailedError.isInstance(error)).toBe(true);
    expect((error as SpawnFailedError).reason).toMatch(
      /could not be put in a job object, so it was ended \(.*error 5\)/,
    );
    expect(calls).toEqual(['create job1', 'assign job1 4242', 'close job1']);
    expect(children[0]!.kills).toEqual([undefined]);
  });

  it('keeps a child that had already exited when it could not be put in its job', async () => {
    const { jobs } = recordingJobs(true);
    const { spawner, children } = setup({
      jobObjects: {
        create() {
          const job = jobs.create();
          return {
            ...job,
            assign(pid) {
              children[0]!.finish(0);
              job.assign(pid);
            },
          };
        },
      },
    });
    const child = await spawner.spawn(request);
    expect(await child.exited).toEqual({ exitCode: 0 });
    expect(children[0]!.kills).toEqual([]);
  });

  it('reports a program it cannot find before starting anything', async () => {
    const { spawner, pipeCalls } = setup();
    await expect(spawner.spawn({ ...request, argv: ['nowhere'] })).rejects.toThrow(/not found on PATH/);
    expect(pipeCalls).toEqual([]);
  });
});

describe('createLocalSpawner routing by platform', () => {
  it('returns the Windows spawner for win32, with its settings', async () => {
    const { jobs, calls } = recordingJobs();
    const started: string[] = [];
    const spawner = createLocalSpawner({
      platform: 'win32',
      windows: {
        jobObjects: jobs,
        pathKind: WINDOWS_TEST_FS,
        pipeSpawn(file) {
          started.push(file);
          const child = new FakeChild();
          process.nextTick(() => child.emit('spawn'));
          return child as unknown as ChildProcess;
        },
      },
    });
    expect('treeKill' in spawner && spawner.treeKill).toBe('job-object');
    await spawner.spawn({ ...request, argv: ['cmd', '/c', 'ver'] });
    expect(started).toEqual(['C:\\Windows\\System32\\cmd.exe']);
    expect(calls).toEqual(['create job1', 'assign job1 4242']);
  });

  it('returns the POSIX spawner for other platforms, and by default on this one', () => {
    for (const spawner of [
      createLocalSpawner({ platform: 'linux' }),
      createLocalSpawner({ platform: 'darwin' }),
    ]) {
      expect('treeKill' in spawner).toBe(false);
      expect(spawner.id).toBe('local');
    }
    expect('treeKill' in createLocalSpawner()).toBe(process.platform === 'win32');
  });
});
