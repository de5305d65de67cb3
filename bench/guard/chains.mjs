// bench/guard, chains and kept links: what it costs the path guard to follow a protected name's
// missing directories as they appear (a chain: `.config/git` in a home with no `.config`) and to keep
// protected links. The targets are the ones planBwrap makes for a home directory that is the workspace:
//   guard.chain.watch_ms / flat_watch_ms / ratio
//                     watch() and stop() of a fresh /etc/skel home's targets (most are chains from the
//                     home) against the same names in a home where every directory on the way exists
//                     (every target a single name in its directory), alternating
//   guard.chain.watches / flat_watches
//                     the inotify watches the guard holds for each (read from /proc)
//   guard.chain.event_cpu_us / plain_event_cpu_us
//                     the guard's CPU time per file created and removed in ~/.config once the chain
//                     watches inside it, against the same in a directory nobody watches
//   guard.chain.keep_event_cpu_us
//                     the same in the home itself when it holds a kept link (~/.bashrc ->
//                     dotfiles/bashrc: removals there wake the guard too), against no kept link
//   guard.chain.window_us / direct_window_us
//                     from `mkdir -p ~/.config/git` returning (no ~/.config before) to `git` gone,
//                     against a name watched directly (`.config` there, `git` made), median of 200
import {
  cpSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { effectivePolicyFromSandboxPolicy } from '@ux/protocol/core';
import { nodeFsView } from '@ux/protocol-utils';
import { checkedNativeBinary, createPathGuard, planBwrap } from '@ux/sandbox-bwrap';
import { alternate, median, report, timeMs } from '../lib/report.mjs';

const TICK_US = 1e6 / 100; // USER_HZ: /proc/<pid>/stat counts CPU time in 1/100 s

/** The guard targets planBwrap makes for a workspace that is the home directory `home`. */
function targetsOf(home) {
  const policy = effectivePolicyFromSandboxPolicy({
    type: 'workspace-write',
    writable_roots: [],
    network_access: false,
    exclude_tmpdir_env_var: true,
    exclude_slash_tmp: true,
  });
  const plan = planBwrap(
    { argv: ['true'], cwd: home, env: {}, policy, tty: false },
    {
      bwrapPath: '/usr/bin/bwrap',
      seccompProgram: new Uint8Array(8),
      deniedFile: '/nonexistent',
      execShim: '/nonexistent',
      fs: nodeFsView(),
      homeDir: home,
      disableUserns: true,
    },
  );
  return plan.guardTargets;
}

const cpuTicks = (pid) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return Number(fields[11]) + Number(fields[12]); // utime + stime
};

const inotifyWatches = (pid) =>
  readdirSync(`/proc/${pid}/fdinfo`)
    .map((fd) => {
      try {
        return readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
      } catch {
        return '';
      }
    })
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('inotify wd:')).length;

/** The guard's CPU per file created and removed in `dir` (µs), over `count` files. */
function cpuPerEvent(pid, dir, count) {
  const before = cpuTicks(pid);
  for (let i = 0; i < count; i++) {
    const file = join(dir, `f${i}`);
    writeFileSync(file, '');
    unlinkSync(file);
  }
  return ((cpuTicks(pid) - before) * TICK_US) / count;
}

/** Waits until `path` is gone (the guard took it); returns how long after `start` (µs). */
function windowUs(path, start) {
  for (;;) {
    try {
      lstatSync(path);
    } catch {
      return Number(process.hrtime.bigint() - start) / 1e3;
    }
  }
}

/** Let the guard catch up: a barrier name in a directory of its own. */
async function settle(guard, scratch) {
  const dir = join(scratch, `barrier-${Math.random().toString(36).slice(2)}`);
  mkdirSync(dir);
  let seen = false;
  const watch = await guard.watch([{ dir, name: '.barrier', why: 'a barrier' }], () => {
    seen = true;
  });
  writeFileSync(join(dir, '.barrier'), '');
  while (!seen) await new Promise((resolve) => setTimeout(resolve, 1));
  await watch.stop();
  rmSync(dir, { recursive: true, force: true });
}

export async function benchChains(scratch) {
  const fresh = join(scratch, 'chain-fresh');
  cpSync('/etc/skel', fresh, { recursive: true });
  const chained = targetsOf(fresh);
  const full = join(scratch, 'chain-full');
  cpSync('/etc/skel', full, { recursive: true });
  for (const target of chained) {
    const names = target.name.split('/');
    if (names.length > 1) mkdirSync(join(full, ...names.slice(0, -1)), { recursive: true });
  }
  const flat = targetsOf(full);
  const chains = chained.filter((target) => target.name.includes('/')).length;
  report('guard.chain.targets', chained.length);
  report('guard.chain.chain_targets', chains);
  report('guard.chain.flat_targets', flat.length);

  const guard = createPathGuard({ binaryPath: checkedNativeBinary('ux-path-guard') });
  guard.start();
  const watchAndStop = (targets) => () =>
    timeMs(async () => {
      const watch = await guard.watch(targets, () => {});
      await watch.stop();
    });
  const result = await alternate({
    subject: watchAndStop(chained),
    baseline: watchAndStop(flat),
    rounds: 200,
    warmup: 20,
  });
  report('guard.chain.watch_ms', result.subject, 'ms');
  report('guard.chain.flat_watch_ms', result.baseline, 'ms');
  report('guard.chain.ratio', result.subject / result.baseline, 'x');
  const pid = guard.pid;
  for (const [name, targets] of [
    ['watches', chained],
    ['flat_watches', flat],
  ]) {
    const watch = await guard.watch(targets, () => {});
    report(`guard.chain.${name}`, inotifyWatches(pid));
    await watch.stop();
  }

  // Events in a directory the chain follows, and in one nobody watches.
  const events = 5000;
  {
    const watch = await guard.watch(chained, () => {});
    mkdirSync(join(fresh, '.config'));
    const plainDir = join(scratch, 'chain-plain');
    mkdirSync(plainDir);
    await settle(guard, scratch);
    const watched = [];
    const plain = [];
    for (let round = 0; round < 4; round++) {
      watched.push(cpuPerEvent(pid, join(fresh, '.config'), events));
      await settle(guard, scratch);
      plain.push(cpuPerEvent(pid, plainDir, events));
      await settle(guard, scratch);
    }
    report('guard.chain.event_cpu_us', median(watched), 'µs');
    report('guard.chain.plain_event_cpu_us', median(plain), 'µs');
    await watch.stop();
    rmdirSync(join(fresh, '.config'));
  }
  // Removals in a directory holding a kept link wake the guard too.
  {
    mkdirSync(join(fresh, 'dotfiles'));
    writeFileSync(join(fresh, 'dotfiles', 'bashrc'), '');
    const bashrc = join(fresh, '.bashrc');
    rmSync(bashrc, { force: true });
    symlinkSync('dotfiles/bashrc', bashrc);
    const kept = targetsOf(fresh);
    if (!kept.some((target) => target.link !== undefined)) throw new Error('no kept link in the plan');
    const keptCpu = [];
    const unkeptCpu = [];
    for (let round = 0; round < 4; round++) {
      for (const [targets, into] of [
        [kept, keptCpu],
        [chained, unkeptCpu],
      ]) {
        const watch = await guard.watch(targets, () => {});
        into.push(cpuPerEvent(pid, fresh, events));
        await settle(guard, scratch);
        await watch.stop();
      }
    }
    report('guard.chain.keep_event_cpu_us', median(keptCpu), 'µs');
    report('guard.chain.nokeep_event_cpu_us', median(unkeptCpu), 'µs');
  }

  // The window: a chain's last name made with the directories on the way in one go, against a name
  // whose directory the guard watches already.
  {
    const watch = await guard.watch(chained, () => {});
    const chainTimes = [];
    const directTimes = [];
    for (let i = 0; i < 200; i++) {
      const start = process.hrtime.bigint();
      mkdirSync(join(fresh, '.config', 'git'), { recursive: true });
      chainTimes.push(windowUs(join(fresh, '.config', 'git'), start));
      await settle(guard, scratch);
      const direct = process.hrtime.bigint();
      mkdirSync(join(fresh, '.config', 'git'));
      directTimes.push(windowUs(join(fresh, '.config', 'git'), direct));
      await settle(guard, scratch);
      rmdirSync(join(fresh, '.config'));
      await settle(guard, scratch);
    }
    const p90 = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length * 0.9)];
    report('guard.chain.window_us', median(chainTimes), 'µs');
    report('guard.chain.window_p90_us', p90(chainTimes), 'µs');
    report('guard.chain.direct_window_us', median(directTimes), 'µs');
    report('guard.chain.direct_window_p90_us', p90(directTimes), 'µs');
    await watch.stop();
  }
  await guard.close();
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { mkdtempSync, realpathSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'ux-bench-chain-')));
  try {
    await benchChains(scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  process.exit(0);
}
