// bench/landlock: the start-up cost of the Landlock backend against bubblewrap's, side by side in one
// run (alternating rounds), each as a host uses it: plan, spawn `true` under the plan, wait, clean up.
//   landlock.true.median_ms      plan + run + cleanup of `true` under workspace-write, Landlock
//   landlock.bwrap.median_ms     the same through bwrap
//   landlock.unsandboxed_median_ms the same `true` spawned without a sandbox
//   landlock.vs_bwrap.ratio      Landlock / bwrap
//   landlock.overhead_ms         Landlock's median over the unsandboxed one
//   landlock.plan_ms, landlock.bwrap.plan_ms   planning alone (policy → argv), medians
//   landlock.launch_ms, landlock.bwrap.launch_ms  the launchers alone (spawn of the planned argv)
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLandlockSandbox } from '@ux/sandbox-landlock';
import { createLocalSpawner } from '@ux/spawn';
import { closeInheritedFds } from '../lib/close-inherited-fds.mjs';
import { alternate, median, report, timeMs } from '../lib/report.mjs';

closeInheritedFds();

// The workspace is not in /tmp's runtime root's way and has no .git (Landlock refuses one).
const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'ux-bench-landlock-')));
const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/root' };
const landlock = createLandlockSandbox();
const bwrap = createBwrapSandbox();
for (const [name, backend] of [
  ['landlock', landlock],
  ['bwrap', bwrap],
]) {
  const probe = await backend.probe();
  if (!probe.available) {
    console.error(`bench/landlock: ${name} cannot run here: ${probe.reason} (${probe.fix})`);
    process.exit(1);
  }
}
const spawner = createLocalSpawner();
const policy = {
  fileSystem: {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
    ],
  },
  network: 'restricted',
};
const request = { argv: ['/bin/true'], cwd, env, tty: false, policy };

async function runToExit(argv, runEnv) {
  const child = await spawner.spawn({ argv, cwd, env: runEnv, tty: false, stdin: 'closed' });
  const status = await child.exited;
  if (status.exitCode !== 0) throw new Error(`${argv[0]} exited ${status.exitCode}`);
}
const sandboxedTrue = (backend) => () =>
  timeMs(async () => {
    const plan = await backend.plan(request);
    await runToExit(plan.argv, plan.env);
    await plan.cleanup?.();
  });
const unsandboxedTrue = () => timeMs(() => runToExit(['/bin/true'], env));

// Three subjects, alternating in pairs: Landlock against bwrap, then Landlock against no sandbox.
const rounds = Number(process.env.UX_BENCH_ROUNDS ?? 150);
const versus = await alternate({
  subject: sandboxedTrue(landlock),
  baseline: sandboxedTrue(bwrap),
  rounds,
  warmup: 15,
});
const bare = await alternate({
  subject: sandboxedTrue(landlock),
  baseline: unsandboxedTrue,
  rounds,
  warmup: 15,
});
report('landlock.true.median_ms', versus.subject, 'ms');
report('landlock.bwrap.median_ms', versus.baseline, 'ms');
report('landlock.unsandboxed_median_ms', bare.baseline, 'ms');
report('landlock.vs_bwrap.ratio', versus.subject / versus.baseline, 'x');
report('landlock.overhead_ms', bare.subject - bare.baseline, 'ms');

// The pieces: planning alone, and the launch alone (the planned argv, spawned and waited for).
for (const [name, backend] of [
  ['landlock', landlock],
  ['landlock.bwrap', bwrap],
]) {
  const plans = [];
  for (let i = 0; i < 120; i++) {
    const time = await timeMs(async () => {
      const plan = await backend.plan(request);
      await plan.cleanup?.();
    });
    if (i >= 20) plans.push(time);
  }
  report(`${name}.plan_ms`, median(plans), 'ms');
}
const landlockPlan = await landlock.plan(request);
const bwrapPlan = await bwrap.plan(request);
const launches = await alternate({
  subject: () => timeMs(() => runToExit(landlockPlan.argv, landlockPlan.env)),
  baseline: () => timeMs(() => runToExit(bwrapPlan.argv, bwrapPlan.env)),
  rounds,
  warmup: 15,
});
await landlockPlan.cleanup?.();
await bwrapPlan.cleanup?.();
report('landlock.launch_ms', launches.subject, 'ms');
report('landlock.bwrap.launch_ms', launches.baseline, 'ms');
report('landlock.launch.ratio', launches.subject / launches.baseline, 'x');

await landlock.close();
await bwrap.close();
rmSync(cwd, { recursive: true, force: true });
process.exit(0);
