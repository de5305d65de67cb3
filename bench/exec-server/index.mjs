// bench/exec-server: ux's exec-server against Codex's (0.169.0, from interop/codex), both driven by the
// same client (the exec-server spawner of @ux/exec-server-client) over stdio, alternating, in one run.
//   exec_server.throughput.ratio     64 MiB of output, start to closed: ours / Codex's MiB/s (target >= 3)
//   exec_server.true_latency.ratio   `true`, start request to exit notification: Codex's / ours (target >= 1.0)
// Without Codex installed (`npm ci --prefix interop/codex`) only our own figures are printed.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createExecServerSpawner, spawnStdioExecServer } from '@ux/exec-server-client';
import { alternate, report, timeMs } from '../lib/report.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
// The test server of @ux/e2e: runExecServer with the bwrap backend.
const OURS = fileURLToPath(import.meta.resolve('@ux/e2e/exec-server-bin'));
const CODEX = join(
  root,
  'interop/codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex',
);
const BYTES = 64 * 1024 * 1024;
const env = { PATH: '/usr/local/bin:/usr/bin:/bin' };

if (!existsSync(OURS)) {
  console.error(`bench exec-server: ${OURS} is missing; run pnpm build first`);
  process.exit(1);
}
const codexHome = mkdtempSync(join(tmpdir(), 'ux-bench-codex-home-'));
const ours = createExecServerSpawner({
  name: 'ux exec-server',
  connect: () => spawnStdioExecServer({ command: process.execPath, args: [OURS, '--listen', 'stdio'] }),
});
const codex = existsSync(CODEX)
  ? createExecServerSpawner({
      name: 'codex exec-server',
      connect: () =>
        spawnStdioExecServer({
          command: CODEX,
          // Serial dispatch is Codex's default; the client never long-polls, so it costs nothing here.
          args: ['exec-server', '--listen', 'stdio'],
          env: { ...process.env, CODEX_HOME: codexHome },
        }),
    })
  : undefined;

async function flood(spawner) {
  let bytes = 0;
  const ms = await timeMs(async () => {
    const child = await spawner.spawn({
      argv: ['/usr/bin/head', '-c', String(BYTES), '/dev/zero'],
      cwd: '/',
      env,
      tty: false,
      stdin: 'closed',
    });
    child.onOutput((chunk) => {
      bytes += chunk.length;
    });
    await child.closed;
  });
  if (bytes !== BYTES) throw new Error(`expected ${BYTES} bytes of output, got ${bytes}`);
  return ms;
}

async function startToExit(spawner) {
  return timeMs(async () => {
    const child = await spawner.spawn({ argv: ['/bin/true'], cwd: '/', env, tty: false, stdin: 'closed' });
    await child.exited;
  });
}

const mibPerSecond = (ms) => BYTES / (1024 * 1024) / (ms / 1000);

try {
  await ours.connection();
  if (!codex) {
    console.log('codex is not installed in interop/codex (npm ci --prefix interop/codex); ours only');
    const times = [];
    for (let i = 0; i < 7; i++) times.push(await flood(ours));
    report('exec_server.throughput', mibPerSecond(times.sort((a, b) => a - b)[3]), 'MiB/s');
  } else {
    await codex.connection();
    const throughput = await alternate({
      subject: () => flood(ours),
      baseline: () => flood(codex),
      rounds: 9,
      warmup: 2,
    });
    report('exec_server.throughput', mibPerSecond(throughput.subject), 'MiB/s');
    report('exec_server.throughput.codex', mibPerSecond(throughput.baseline), 'MiB/s');
    report('exec_server.throughput.ratio', throughput.baseline / throughput.subject, 'x', '>=3');
    const latency = await alternate({
      subject: () => startToExit(ours),
      baseline: () => startToExit(codex),
      rounds: 200,
      warmup: 20,
    });
    report('exec_server.true_latency.median_ms', latency.subject, 'ms');
    report('exec_server.true_latency.codex_median_ms', latency.baseline, 'ms');
    report('exec_server.true_latency.ratio', latency.baseline / latency.subject, 'x', '>=1.0');
  }
} finally {
  await ours.close();
  await codex?.close();
  rmSync(codexHome, { recursive: true, force: true });
}
