import { type ChildProcess, spawn as childSpawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { type ExecProcess, SPAWNER_SPECIFICATION_VERSION, SpawnFailedError } from '@ux/protocol/core';
import type { LocalSpawner } from './local-spawner.js';
import type { LocalSpawnRequest } from './spawn-escalation.js';
import type { WindowsJob, WindowsJobObjects } from './windows-job-objects.js';
import { WindowsPipeProcess } from './windows-pipe-process.js';
import { WindowsProcessTree } from './windows-process-tree.js';
import { nodeWindowsPathKind, type WindowsPathKind } from './windows-program-path.js';
import { type WindowsPty, WindowsPtyProcess } from './windows-pty-process.js';
import {
  planWindowsSpawn,
  type WindowsPipeSpawnOptions,
  type WindowsPtySpawnOptions,
} from './windows-spawn-plan.js';

/** How long a child that could not be put in its job may take to be found already exited. */
const EXITED_BEFORE_JOB_MS = 100;

export interface WindowsSpawnerSettings {
  /**
   * Job objects, so terminate ends the whole tree (`loadKoffiJobObjects()` of
   * `@ux/sandbox-windows-token`). Without them only the child itself is ended (`treeKill: 'direct-child'`).
   */
  jobObjects?: WindowsJobObjects;
  /** node-pty's `spawn` (default: node-pty, loaded at the first PTY). Tests hand in a fake. */
  ptySpawn?: (file: string, args: string, options: WindowsPtySpawnOptions) => WindowsPty;
  /** child_process's `spawn` (default: the real one). Tests hand in a fake. */
  pipeSpawn?: (file: string, args: readonly string[], options: WindowsPipeSpawnOptions) => ChildProcess;
  /** What a path is (default: this machine's file system). */
  pathKind?: WindowsPathKind;
}

export interface WindowsSpawner extends LocalSpawner {
  /** How terminate reaches what a command started: its job object, or only the child itself. */
  readonly treeKill: 'job-object' | 'direct-child';
}

/**
 * Starts commands on Windows: PTYs through node-pty's ConPTY, pipes through child_process with a hidden
 * console, each child in a kill-on-close job object when `jobObjects` is given. What it hands node-pty
 * and child_process is `planWindowsSpawn`'s plan. `createLocalSpawner()` returns it on Windows.
 *
 * Not run on a real Windows machine: see "Not run on Windows" in the package README.
 */
export function createWindowsSpawner(settings: WindowsSpawnerSettings = {}): WindowsSpawner {
  const pathKind = settings.pathKind ?? nodeWindowsPathKind;
  const pipeSpawn =
    settings.pipeSpawn ??
    ((file, args, options) => childSpawn(file, [...args], { ...options, stdio: [...options.stdio] }));
  let ptySpawn = settings.ptySpawn;

  /**
   * Puts a started child in a new job. A child that cannot be put in one is ended and the spawn fails,
   * unless it has already exited (a command that ends at once may be gone before it could be assigned).
   */
  async function attachJob(
    tree: WindowsProcessTree,
    pid: number | undefined,
    argv: readonly string[],
    exited: Promise<unknown>,
  ): Promise<void> {
    if (!settings.jobObjects || pid === undefined) return;
    let job: WindowsJob | undefined;
    try {
      job = settings.jobObjects.create();
      job.assign(pid);
      tree.attach(job);
      return;
    } catch (error) {
      try {
        job?.close();
      } catch {
        // The job was never usable.
      }
      const gone = await Promise.race([
        exited.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), EXITED_BEFORE_JOB_MS)),
      ]);
      if (gone) return;
      tree.end('terminate');
      throw new SpawnFailedError(
        {
          command: argv,
          reason: `the process could not be put in a job object, so it was ended (${(error as Error).message})`,
        },
        { cause: error },
      );
    }
  }

  async function spawnWindows(request: LocalSpawnRequest): Promise<ExecProcess> {
    const plan = planWindowsSpawn(request, pathKind);
    const { argv } = request;

    if (plan.kind === 'pty') {
      let pty: WindowsPty;
      try {
        ptySpawn ??= loadNodePtySpawn();
        pty = ptySpawn(plan.file, plan.args, plan.options);
      } catch (error) {
        throw new SpawnFailedError(
          { command: argv, path: plan.program, reason: (error as Error).message },
          { cause: error },
        );
      }
      const tree = new WindowsProcessTree(() => pty.kill());
      const process_ = new WindowsPtyProcess(pty, tree);
      await attachJob(tree, pty.pid, argv, process_.exited);
      return process_;
    }

    let child: ChildProcess;
    try {
      // child_process throws some failures at once (EINVAL) and reports the rest as an 'error' event.
      child = pipeSpawn(plan.file, plan.args, plan.options);
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
    } catch (error) {
      throw new SpawnFailedError(
        { command: argv, path: plan.program, reason: (error as Error).message },
        { cause: error },
      );
    }
    const tree = new WindowsProcessTree(() => child.kill());
    const process_ = new WindowsPipeProcess(child, tree);
    await attachJob(tree, child.pid, argv, process_.exited);
    return process_;
  }

  return {
    specificationVersion: SPAWNER_SPECIFICATION_VERSION,
    id: 'local',
    spawn: spawnWindows,
    treeKill: settings.jobObjects ? 'job-object' : 'direct-child',
    // No host reaper and no spawn helper on Windows: the job objects do their work.
    reaperPid: undefined,
    pipesThroughHelper: false,
  };
}

/** node-pty's public `spawn` (its Windows half drives ConPTY); loaded on first use. */
function loadNodePtySpawn(): NonNullable<WindowsSpawnerSettings['ptySpawn']> {
  const require = createRequire(import.meta.url);
  let nodePty: { spawn(file: string, args: string, options: object): WindowsPty };
  try {
    nodePty = require('node-pty') as typeof nodePty;
  } catch (error) {
    throw new Error(
      `node-pty could not be loaded (${(error as Error).message}); reinstall it so its Windows prebuild (ConPTY) is present`,
      { cause: error },
    );
  }
  return (file, args, options) => nodePty.spawn(file, args, options);
}
