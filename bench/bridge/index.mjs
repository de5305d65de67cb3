// Soak (not a CI test): runs the built `ux sandbox --allow-domain allowed.test -- env`
// SOAK_RUNS times quiet and SOAK_RUNS times under CPU load (one busy loop per core), and
// `ux exec --allow-domain` a quarter as often; prints every hang (a run still going after 20 s, then
// killed) and one BENCH line per series. Reports, never fails the suite.
// Then, in one long-lived process each, quiet and loaded:
//   mcp.*          SOAK_RUNS proxied calls through one `ux mcp --allow-domain allowed.test` (the MCP
//                  SDK's client, 4 in flight): `env` and `curl` to a local server through the proxy
//   exec_server.*  SOAK_RUNS execs through one `ux exec-server --listen stdio` (the remote spawner of
//                  @ux/exec-server-client, 4 in flight): plain and bubblewrap-sandboxed, pipes and
//                  terminal, some interrupted
// A call or exec not answered within 20 s is a hang. SOAK_SERIES=mcp,exec_server picks series by prefix.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import {
  createExecServerSandbox,
  createExecServerSpawner,
  spawnStdioExecServer,
} from '@ux/exec-server-client';
import { loadMcpClient, makeUxHome, UX_BIN } from '../lib/ux-cli.mjs';

const BIN = UX_BIN;
const RUNS = Number(process.env.SOAK_RUNS ?? 300);
const HANG_MS = 20_000;

const { home, env } = makeUxHome('ux-bridge-soak-', { tmp: true, proxyHosts: 'allowed.test=127.0.0.1' });

function once(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: join(home, 'workspace'),
      env,
      stdio: 'ignore',
    });
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, HANG_MS);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ hung, status });
    });
  });
}

const busyLoops = (load) =>
  load
    ? Array.from({ length: availableParallelism() }, () =>
        spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }),
      )
    : [];

function print(name, hangs, failed, runs) {
  console.log(`BENCH bridge.${name}.hangs ${hangs} of ${runs} target=0 ${hangs === 0 ? 'ok' : 'FAIL'}`);
  console.log(`BENCH bridge.${name}.failed ${failed} of ${runs}`);
}

async function series(name, args, runs, load) {
  const loops = busyLoops(load);
  let hangs = 0;
  let failed = 0;
  try {
    for (let i = 0; i < runs; i++) {
      const { hung, status } = await once(args);
      if (hung) {
        hangs++;
        console.log(`HANG ${name} run ${i}`);
      } else if (status !== 0) failed++;
    }
  } finally {
    for (const loop of loops) loop.kill('SIGKILL');
  }
  print(name, hangs, failed, runs);
}

/**
 * Runs `runs` jobs, `inFlight` at a time; a job still unsettled after HANG_MS is a hang (reported, and
 * waited for no longer). `job(i)` resolves true when its answer was right.
 */
async function inParallel(name, runs, inFlight, job) {
  let next = 0;
  let hangs = 0;
  let failed = 0;
  const worker = async () => {
    while (next < runs) {
      const i = next++;
      let timer;
      const outcome = await Promise.race([
        job(i).then(
          (ok) => (ok ? 'ok' : 'failed'),
          (error) => {
            console.log(`FAILED ${name} run ${i}: ${error.message}`);
            return 'failed';
          },
        ),
        new Promise((resolve) => {
          timer = setTimeout(() => resolve('hung'), HANG_MS);
        }),
      ]);
      clearTimeout(timer);
      if (outcome === 'hung') {
        hangs++;
        console.log(`HANG ${name} run ${i}`);
      } else if (outcome === 'failed') failed++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  return { hangs, failed };
}

async function mcpSeries(name, runs, load, port) {
  const { Client, StdioClientTransport } = await loadMcpClient();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, 'mcp', '--allow-domain', 'allowed.test'],
    cwd: join(home, 'workspace'),
    env,
    stderr: 'ignore',
  });
  const client = new Client({ name: 'ux-bridge-soak', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);
  const loops = busyLoops(load);
  try {
    const { hangs, failed } = await inParallel(name, runs, 4, async (i) => {
      const cmd = i % 2 ? 'env' : `curl -sS --max-time 10 http://allowed.test:${port}/`;
      const result = await client.callTool({ name: 'exec_command', arguments: { cmd } }, undefined, {
        timeout: 3600_000,
      });
      const text = result.content.map((part) => part.text).join('');
      return i % 2 ? text.includes('HTTP_PROXY=') : text.includes('hello from allowed.test');
    });
    print(name, hangs, failed, runs);
  } finally {
    for (const loop of loops) loop.kill('SIGKILL');
    await client.close();
  }
}

async function execServerSeries(name, runs, load) {
  const remote = createExecServerSpawner({
    name: 'ux exec-server',
    connect: () =>
      spawnStdioExecServer({
        command: process.execPath,
        args: [BIN, 'exec-server', '--listen', 'stdio'],
        env,
      }),
  });
  const sandbox = createExecServerSandbox(remote);
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
  const cwd = join(home, 'workspace');
  await remote.connection();
  const loops = busyLoops(load);
  try {
    const { hangs, failed } = await inParallel(name, runs, 4, async (i) => {
      const tty = i % 3 === 1;
      const interrupt = i % 5 === 4;
      // bash, not sh: dash catches SIGINT under -c and holds one that comes before it forks `sleep`
      // until `sleep` ends (14 of 100 raw `setsid sh -c 'echo ready; sleep 30'` runs, SIGINT to the
      // group on "ready", outlive 3 s here; bash 0 of 100): the shell's race, not the server's.
      const argv = interrupt
        ? ['/bin/bash', '-c', 'echo ready; sleep 30']
        : ['/bin/sh', '-c', `echo out-${i}`];
      const request =
        i % 2
          ? await sandbox.plan({ argv, cwd, env: { PATH: '/usr/bin:/bin' }, policy, tty })
          : { argv, cwd, env: { PATH: '/usr/bin:/bin' } };
      const child = await remote.spawn({ ...request, tty, stdin: tty ? 'pipe' : 'closed' });
      let output = '';
      let interrupted = false;
      child.onOutput((chunk) => {
        output += Buffer.from(chunk).toString('utf8');
        if (interrupt && !interrupted && output.includes('ready')) {
          interrupted = true;
          void (tty ? child.write('\u0003') : child.interrupt());
        }
      });
      const status = await child.exited;
      await child.closed;
      return interrupt ? status.exitCode !== 0 || status.signal !== undefined : output.includes(`out-${i}`);
    });
    print(name, hangs, failed, runs);
  } finally {
    for (const loop of loops) loop.kill('SIGKILL');
    await remote.close();
  }
}

const wanted = (process.env.SOAK_SERIES ?? 'sandbox,exec,mcp,exec_server').split(',');
const picked = (name) => wanted.some((prefix) => name === prefix || name.startsWith(`${prefix}.`));
const sandbox = ['sandbox', '--allow-domain', 'allowed.test', '--', 'env'];
const exec = ['exec', '--allow-domain', 'allowed.test', '--', 'env'];
const http = createServer((_request, response) => response.end('hello from allowed.test\n'));
await new Promise((resolve) => http.listen(0, '127.0.0.1', resolve));
const port = http.address().port;
try {
  if (picked('sandbox.quiet')) await series('sandbox.quiet', sandbox, RUNS, false);
  if (picked('sandbox.load')) await series('sandbox.load', sandbox, RUNS, true);
  if (picked('exec.quiet')) await series('exec.quiet', exec, Math.ceil(RUNS / 4), false);
  if (picked('exec.load')) await series('exec.load', exec, Math.ceil(RUNS / 4), true);
  if (picked('mcp.quiet')) await mcpSeries('mcp.quiet', RUNS, false, port);
  if (picked('mcp.load')) await mcpSeries('mcp.load', RUNS, true, port);
  if (picked('exec_server.quiet')) await execServerSeries('exec_server.quiet', RUNS, false);
  if (picked('exec_server.load')) await execServerSeries('exec_server.load', RUNS, true);
} finally {
  http.closeAllConnections();
  http.close();
  rmSync(home, { recursive: true, force: true });
}
