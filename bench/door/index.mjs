// bench/door: the door against raw child_process, in one run.
//   door.true.ratio              exec_command of `true` (pipe, no sandbox) vs spawning the same argv raw (target <= 1.2)
//   door.concurrency.cpu_pct     64 live processes printing every 10 ms for 10 s, polled by write_stdin:
//                                the host's own CPU (target <= 10 % of one core)
//   door.concurrency.rss_mib     the host's peak RSS meanwhile (target <= 150 MiB)
//   door.drain.throughput.ratio  256 MiB drained through write_stdin polls vs raw pipe reading (target >= 0.7)
//   door.drain.rss_growth_mib    RSS growth while draining (the 1 MiB buffers hold)
//   door.tty_drain.rss_growth_mib  resident memory kept after 300 MB went through a polled terminal
//                                session (target <= 32 MiB), against the spawner's PTY read raw
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { planTools } from '@ux/features';
import { createOrchestrator } from '@ux/orchestrator';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createLocalSpawner } from '@ux/spawn';
import { buildEnvironment, createUnifiedExec } from '@ux/unified-exec';
import { closeInheritedFds } from '../lib/close-inherited-fds.mjs';
import { alternate, report, timeMs } from '../lib/report.mjs';

// Each phase runs in a fresh process, so one phase's heap and compiled code do not weigh on the next.
const phase = process.argv[2];
if (!phase) {
  let status = 0;
  for (const name of ['true', 'concurrency', 'drain', 'tty-drain']) {
    status ||=
      spawnSync(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), name], { stdio: 'inherit' })
        .status ?? 1;
  }
  process.exit(status);
}

// As in bench/spawn: measure the direct path, not the cost of descriptors this shell leaked to us.
closeInheritedFds();

const cwd = mkdtempSync(join(tmpdir(), 'ux-bench-door-'));
const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/root' };
const door = createUnifiedExec({
  orchestrator: createOrchestrator({
    sandboxRegistry: createSandboxRegistry({}),
    approvalPolicy: 'never',
    policy: { type: 'danger-full-access' },
    reviewer: {
      specificationVersion: 'ux-reviewer-v1',
      id: 'none',
      review: async () => ({ type: 'denied' }),
    },
  }),
  spawner: createLocalSpawner(),
  toolPlan: planTools({
    flags: { shell_tool: true, unified_exec: true, shell_zsh_fork: false, unified_exec_zsh_fork: false },
    platform: process.platform,
  }),
  cwd,
  userShell: '/bin/bash',
  baseEnvironment: env,
});
let calls = 0;
const call = () => ({ callId: `bench-${++calls}` });

if (phase === 'true') {
  // 1. Round trip of `true`.
  const doorTrue = () =>
    timeMs(async () => {
      const response = await door.execCommand({ cmd: 'true', login: false }, call());
      if (!response.text.includes('Process exited with code 0')) throw new Error(response.text);
    });
  // The same argv with the same environment the door computes (its UTF-8 locale makes bash start slower).
  const doorEnv = buildEnvironment(env);
  const rawTrue = () =>
    timeMs(
      () =>
        new Promise((resolve) => {
          const child = spawn('/bin/bash', ['-c', 'true'], {
            cwd,
            env: doorEnv,
            detached: true,
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          child.on('close', resolve);
        }),
    );
  const roundTrip = await alternate({ subject: doorTrue, baseline: rawTrue, rounds: 200, warmup: 20 });
  report('door.true.median_ms', roundTrip.subject, 'ms');
  report('door.true.raw_median_ms', roundTrip.baseline, 'ms');
  report('door.true.ratio', roundTrip.subject / roundTrip.baseline, 'x', '<=1.20');
}

if (phase === 'concurrency') {
  // 2. 64 chatty processes polled by write_stdin for 10 s.
  const ids = [];
  for (let i = 0; i < 64; i++) {
    const response = await door.execCommand(
      { cmd: 'while :; do echo "line from the process"; sleep 0.01; done', login: false, yield_time_ms: 250 },
      call(),
    );
    ids.push(Number(/session ID (\d+)/.exec(response.text)[1]));
  }
  const cpuBefore = process.cpuUsage();
  const wallBefore = Date.now();
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 100);
  let polledBytes = 0;
  const deadline = Date.now() + 10_000;
  await Promise.all(
    ids.map(async (id) => {
      while (Date.now() < deadline) {
        const response = await door.writeStdin(
          { session_id: id, yield_time_ms: Math.max(5000, deadline - Date.now()) },
          call(),
        );
        polledBytes += response.text.length;
      }
    }),
  );
  clearInterval(sampler);
  const cpu = process.cpuUsage(cpuBefore);
  const wall = Date.now() - wallBefore;
  report('door.concurrency.cpu_pct', ((cpu.user + cpu.system) / 1000 / wall) * 100, '%', '<=10');
  report('door.concurrency.rss_mib', peakRss / (1024 * 1024), 'MiB', '<=150');
  report('door.concurrency.polled_kib', polledBytes / 1024, 'KiB');
  await door.cleanBackgroundTerminals();
}

if (phase === 'drain') {
  // 3. 256 MiB through write_stdin polls, against raw pipe reading.
  const BYTES = 256 * 1024 * 1024;
  const rawFlood = () =>
    timeMs(
      () =>
        new Promise((resolve) => {
          const child = spawn('/usr/bin/head', ['-c', String(BYTES), '/dev/zero'], {
            env,
            detached: true,
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          child.stdout.on('data', () => {});
          child.on('close', resolve);
        }),
    );
  const doorFlood = () =>
    timeMs(async () => {
      const first = await door.execCommand(
        { cmd: `head -c ${BYTES} /dev/zero`, login: false, yield_time_ms: 250 },
        call(),
      );
      let text = first.text;
      const id = /session ID (\d+)/.exec(text)?.[1];
      while (!/Process exited with code/.test(text)) {
        text = (await door.writeStdin({ session_id: Number(id), yield_time_ms: 5000 }, call())).text;
      }
    });
  const drain = await alternate({ subject: doorFlood, baseline: rawFlood, rounds: 3, warmup: 1 });
  const mib = BYTES / (1024 * 1024);
  report('door.drain.throughput', mib / (drain.subject / 1000), 'MiB/s');
  report('door.drain.raw_throughput', mib / (drain.baseline / 1000), 'MiB/s');
  report('door.drain.throughput.ratio', drain.baseline / drain.subject, 'x', '>=0.70');
  // Peak RSS growth over one run of each, measured apart: the raw reader's shows what Node's own
  // read buffers cost before the garbage collector catches up.
  const growth = async (run) => {
    const before = process.memoryUsage().rss;
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 10);
    await run();
    clearInterval(sampler);
    return (Math.max(peak, process.memoryUsage().rss) - before) / (1024 * 1024);
  };
  report('door.drain.rss_growth_mib', await growth(doorFlood), 'MiB');
  report('door.drain.raw_rss_growth_mib', await growth(rawFlood), 'MiB');
}

if (phase === 'tty-drain') {
  // 4. A chatty terminal polled to its end, three times 100 MB: what stays behind. (A wait loop that
  // left a promise reaction behind per turn kept about a quarter of such output on the heap.)
  const BYTES = 100 * 1000 * 1000;
  const spawner = createLocalSpawner();
  const doorFlood = async () => {
    const first = await door.execCommand(
      { cmd: `yes | head -c ${BYTES}`, tty: true, login: false, yield_time_ms: 250 },
      call(),
    );
    let text = first.text;
    const id = /session ID (\d+)/.exec(text)?.[1];
    while (!/Process exited with code/.test(text)) {
      text = (await door.writeStdin({ session_id: Number(id), yield_time_ms: 5000 }, call())).text;
    }
  };
  const rawFlood = async () => {
    const child = await spawner.spawn({
      argv: ['/bin/sh', '-c', `yes | head -c ${BYTES}`],
      cwd,
      env: { ...env, TERM: 'dumb' },
      tty: true,
      stdin: 'pipe',
    });
    child.onOutput(() => {});
    await child.closed;
  };
  const settledRss = async () => {
    for (let i = 0; i < 3; i++) {
      globalThis.gc?.();
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return process.memoryUsage().rss / (1024 * 1024);
  };
  const kept = async (run) => {
    await run(); // warm-up: buffers, compiled code and the allocator's arenas reach their size
    const before = await settledRss();
    for (let round = 0; round < 3; round++) await run();
    return (await settledRss()) - before;
  };
  report('door.tty_drain.rss_growth_mib', await kept(doorFlood), 'MiB', '<=32');
  report('door.tty_drain.raw_rss_growth_mib', await kept(rawFlood), 'MiB');
}

await door.shutdown();
rmSync(cwd, { recursive: true, force: true });
process.exit(0);
