// Soak for issue 29 (not a CI test): runs the built `ux sandbox --allow-domain allowed.test -- env`
// SOAK_RUNS times quiet and SOAK_RUNS times under CPU load (one busy loop per core), and
// `ux exec --allow-domain` a quarter as often; prints every hang (a run still going after 20 s, then
// killed) and one BENCH line per series. Reports, never fails the suite.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const BIN = join(here, '..', '..', 'apps', 'cli', 'dist', 'ux.cjs');
const RUNS = Number(process.env.SOAK_RUNS ?? 300);
const HANG_MS = 20_000;

const home = mkdtempSync('/var/tmp/ux-bridge-soak-');
mkdirSync(join(home, 'workspace'));
mkdirSync(join(home, 'tmp'));
const env = {
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  UX_HOME: home,
  UX_REQUIREMENTS: join(home, 'requirements.toml'),
  SHELL: '/bin/bash',
  TMPDIR: join(home, 'tmp'),
  UX_NETWORK_PROXY_HOSTS: 'allowed.test=127.0.0.1',
};

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

async function series(name, args, runs, load) {
  const loops = load
    ? Array.from({ length: availableParallelism() }, () =>
        spawn(process.execPath, ['-e', 'for(;;){}'], { stdio: 'ignore' }),
      )
    : [];
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
  console.log(`BENCH bridge.${name}.hangs ${hangs} of ${runs} target=0 ${hangs === 0 ? 'ok' : 'FAIL'}`);
  console.log(`BENCH bridge.${name}.failed ${failed} of ${runs}`);
}

const sandbox = ['sandbox', '--allow-domain', 'allowed.test', '--', 'env'];
const exec = ['exec', '--allow-domain', 'allowed.test', '--', 'env'];
try {
  await series('sandbox.quiet', sandbox, RUNS, false);
  await series('sandbox.load', sandbox, RUNS, true);
  await series('exec.quiet', exec, Math.ceil(RUNS / 4), false);
  await series('exec.load', exec, Math.ceil(RUNS / 4), true);
} finally {
  rmSync(home, { recursive: true, force: true });
}
