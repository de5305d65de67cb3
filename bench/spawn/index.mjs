// bench/spawn: the local spawner against raw child_process (and raw node-pty), in one run.
//   spawn.true.ratio           spawn-to-exit of `true`, direct pipes (target <= 1.10)
//   spawn.true_helper.ratio    the same through the descriptor-closing helper (hosts with leaky fds)
//   spawn.pipe.throughput      256 MiB through the pipe backend, and its ratio to raw child_process
//   spawn.pty.throughput       256 MiB through the PTY backend, ratio to raw child_process and raw node-pty
//   spawn.drain.rss_growth_mib peak RSS growth while 256 MiB are drained through the 1 MiB buffer
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { createLocalSpawner, OutputTracker } from '@ux/spawn';
import { closeInheritedFds } from '../lib/close-inherited-fds.mjs';
import { alternate, median, report, timeMs } from '../lib/report.mjs';

const require = createRequire(import.meta.url);
const pty = require('node-pty');
const env = { PATH: '/usr/local/bin:/usr/bin:/bin' };
const BYTES = 256 * 1024 * 1024;
const FLOOD = ['/usr/bin/head', '-c', String(BYTES), '/dev/zero'];

// Descriptors this process inherited without close-on-exec would send every child through the
// helper; close them so `spawn.true.ratio` measures the direct path, and measure the helper apart.
closeInheritedFds();

const direct = createLocalSpawner();
const helper = createLocalSpawner({ fdHygiene: 'always' });

function rawTrue() {
  return timeMs(
    () =>
      new Promise((resolve) => {
        const child = spawn('/bin/true', [], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
        child.on('close', resolve);
      }),
  );
}
function uxTrue(spawner) {
  return () =>
    timeMs(async () => {
      const child = await spawner.spawn({ argv: ['/bin/true'], cwd: '/', env, tty: false, stdin: 'closed' });
      await child.closed;
    });
}

const trueDirect = await alternate({ subject: uxTrue(direct), baseline: rawTrue, rounds: 300, warmup: 30 });
report('spawn.true.median_ms', trueDirect.subject, 'ms');
report('spawn.true.raw_median_ms', trueDirect.baseline, 'ms');
report('spawn.true.ratio', trueDirect.subject / trueDirect.baseline, 'x', '<=1.10');
const trueHelper = await alternate({ subject: uxTrue(helper), baseline: rawTrue, rounds: 200, warmup: 20 });
report('spawn.true_helper.ratio', trueHelper.subject / trueHelper.baseline, 'x');

function rawPipeFlood() {
  return timeMs(
    () =>
      new Promise((resolve) => {
        const child = spawn(FLOOD[0], FLOOD.slice(1), {
          env,
          detached: true,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let bytes = 0;
        child.stdout.on('data', (chunk) => {
          bytes += chunk.length;
        });
        child.on('close', () => check(bytes, resolve));
      }),
  );
}
function rawPtyFlood() {
  return timeMs(
    () =>
      new Promise((resolve) => {
        const terminal = pty.spawn(FLOOD[0], FLOOD.slice(1), {
          env,
          cwd: '/',
          cols: 80,
          rows: 24,
          encoding: null,
        });
        let bytes = 0;
        terminal.onData((chunk) => {
          bytes += chunk.length;
        });
        // node-pty's wrapper may drop the last few KB at exit (see @ux/spawn's PtyProcess); a baseline
        // for throughput only needs the bulk.
        terminal.onExit(() => check(bytes + 1024 * 1024 > BYTES ? BYTES : bytes, resolve));
      }),
  );
}
function uxFlood(tty) {
  return () =>
    timeMs(async () => {
      const child = await direct.spawn({ argv: FLOOD, cwd: '/', env, tty, stdin: 'closed' });
      let bytes = 0;
      child.onOutput((chunk) => {
        bytes += chunk.length;
      });
      await child.closed;
      await new Promise((resolve) => check(bytes, resolve));
    });
}
function check(bytes, resolve) {
  if (bytes !== BYTES) throw new Error(`read ${bytes} bytes, expected ${BYTES}`);
  resolve();
}
const mibPerSecond = (ms) => BYTES / (1024 * 1024) / (ms / 1000);

const pipe = await alternate({ subject: uxFlood(false), baseline: rawPipeFlood, rounds: 5, warmup: 1 });
report('spawn.pipe.throughput', mibPerSecond(pipe.subject), 'MiB/s');
report('spawn.pipe.raw_throughput', mibPerSecond(pipe.baseline), 'MiB/s');
report('spawn.pipe.throughput.ratio', pipe.baseline / pipe.subject, 'x', '>=0.80');

const ptyRun = await alternate({ subject: uxFlood(true), baseline: rawPtyFlood, rounds: 3, warmup: 1 });
report('spawn.pty.throughput', mibPerSecond(ptyRun.subject), 'MiB/s');
report('spawn.pty.raw_node_pty_throughput', mibPerSecond(ptyRun.baseline), 'MiB/s');
report('spawn.pty.throughput.ratio', ptyRun.baseline / ptyRun.subject, 'x', '>=0.80');
report('spawn.pty.vs_raw_pipe.ratio', pipe.baseline / ptyRun.subject, 'x');

// Drain 256 MiB the way the door will: a 1 MiB head/tail buffer emptied every 10 ms.
global.gc?.();
const before = process.memoryUsage().rss;
let peak = before;
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage().rss);
}, 20);
const drained = [];
for (let round = 0; round < 2; round++) {
  const child = await direct.spawn({ argv: FLOOD, cwd: '/', env, tty: false, stdin: 'closed' });
  const tracker = new OutputTracker(child);
  let total = 0;
  const drainer = setInterval(() => {
    total += tracker.buffer.drain().length;
  }, 10);
  await child.closed;
  clearInterval(drainer);
  total += tracker.buffer.drain().length;
  drained.push(total);
}
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
report('spawn.drain.rss_growth_mib', (peak - before) / (1024 * 1024), 'MiB', '<=32');
report('spawn.drain.returned_mib', median(drained) / (1024 * 1024), 'MiB');
process.exit(0);
