import type { ExecProcess, LaunchPlan, SpawnRequest } from '@ux/protocol';
import { runToEnd } from '@ux/protocol-testing';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { launchPlanned } from './launch-planned.js';
import { createLocalSpawner } from './local-spawner.js';

const spawner = createLocalSpawner();
const PATH = '/usr/local/bin:/usr/bin:/bin';
const request: SpawnRequest = {
  argv: ['/bin/sh', '-c', 'echo unplanned'],
  cwd: '/',
  env: { PATH },
  tty: false,
  stdin: 'closed',
};

beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck();

/** A plan that runs the command through `sh`, printing a variable only the plan sets, and logs its clean-up. */
function wrappingPlan(log: string[], overrides: Partial<LaunchPlan> = {}): LaunchPlan {
  return {
    argv: ['/bin/sh', '-c', 'echo "planned $MARK"'],
    cwd: '/tmp',
    env: { PATH, MARK: 'by-plan' },
    sandboxType: 'test',
    enforcement: { fileSystem: 'none', network: 'none', notes: [] },
    cleanup: async () => {
      log.push('plan cleanup');
    },
    ...overrides,
  };
}

describe('launchPlanned', () => {
  it('starts the request as it is without a plan, and settles after the output closed', async () => {
    const log: string[] = [];
    const launch = await launchPlanned({
      request,
      spawn: (spawn) => spawner.spawn(spawn),
      release: async () => {
        log.push('release');
      },
    });
    expect(launch.plan).toBeUndefined();
    expect((await runToEnd(launch.process)).text).toBe('unplanned\n');
    await launch.settled;
    expect(log).toEqual(['release']);
  });

  it("starts the plan's argv, cwd and env, and cleans up once, after the process closed", async () => {
    const log: string[] = [];
    let started: ExecProcess | undefined;
    const launch = await launchPlanned({
      request,
      spawn: async (spawn) => {
        started = await spawner.spawn(spawn);
        return started;
      },
      plan: async () => wrappingPlan(log),
      release: async () => {
        log.push(started?.exitStatus() ? 'release after exit' : 'release before exit');
      },
    });
    expect(launch.plan?.sandboxType).toBe('test');
    const { status, text } = await runToEnd(launch.process);
    expect(status.exitCode).toBe(0);
    expect(text).toBe('planned by-plan\n');
    await launch.settled;
    await launch.settled;
    expect(log).toEqual(['release after exit', 'plan cleanup']);
  });

  it('cleans up (release, then the plan) and rethrows when the planned command cannot start', async () => {
    const log: string[] = [];
    const failing = launchPlanned({
      request,
      spawn: (spawn) => spawner.spawn(spawn),
      plan: async () => wrappingPlan(log, { cwd: '/nonexistent/launch-planned-cwd' }),
      release: async () => {
        log.push('release');
      },
    });
    await expect(failing).rejects.toThrow(/launch-planned-cwd|ENOENT|No such file/);
    expect(log).toEqual(['release', 'plan cleanup']);
  });

  it('keeps the start error when a clean-up fails too', async () => {
    const failing = launchPlanned({
      request: { ...request, cwd: '/nonexistent/launch-planned-cwd' },
      spawn: (spawn) => spawner.spawn(spawn),
      release: async () => {
        throw new Error('release failed');
      },
    });
    await expect(failing).rejects.toThrow(/launch-planned-cwd|ENOENT|No such file/);
  });

  it('releases and never starts anything when planning fails', async () => {
    const log: string[] = [];
    let spawned = 0;
    const failing = launchPlanned({
      request,
      spawn: (spawn) => {
        spawned++;
        return spawner.spawn(spawn);
      },
      plan: async () => {
        throw new Error('no sandbox for you');
      },
      release: async () => {
        log.push('release');
      },
    });
    await expect(failing).rejects.toThrow('no sandbox for you');
    expect(spawned).toBe(0);
    expect(log).toEqual(['release']);
  });
});
