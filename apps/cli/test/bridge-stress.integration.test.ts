// The proxied sandbox's init (ux-sandbox-exec, running the bridge) used to miss the end of a
// command that ended at once, and `ux sandbox --allow-domain … -- env` hung about one run in six. These
// runs go through the shipped CLI; the only time bound is a generous hang deadline per run.
import { spawn } from 'node:child_process';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN } from './cli-harness.js';
import { type NetworkHome, networkHome } from './network-harness.js';

const HANG_MS = 20_000;

interface Run {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  hung: boolean;
}

function runWithDeadline(args: string[], home: NetworkHome): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: home.workspace,
      env: home.env,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    let stdout = '';
    let hung = false;
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    // ux runs bwrap with --die-with-parent: killing ux ends the sandbox with it.
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, HANG_MS);
    child.on('error', reject);
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, hung });
    });
  });
}

async function stress(runs: number, args: string[]) {
  const home = networkHome();
  const hangs: number[] = [];
  const failures: string[] = [];
  for (let i = 0; i < runs; i++) {
    const run = await runWithDeadline(args, home);
    if (run.hung) hangs.push(i);
    else if (run.status !== 0 || !run.stdout.includes('UX_SANDBOX_NETWORK=proxied'))
      failures.push(`run ${i}: status ${run.status} signal ${run.signal}`);
  }
  return { hangs, failures };
}

/** Two busy loops (this machine has two cores) for the length of the test. */
function cpuLoad() {
  const loops = [0, 1].map(() => spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  onTestFinished(() => {
    for (const loop of loops) loop.kill('SIGKILL');
  });
}

const SANDBOX = ['sandbox', '--allow-domain', 'allowed.test', '--', 'env'];
const EXEC = ['exec', '--allow-domain', 'allowed.test', '--', 'env'];
const hangMessage = (hangs: number[]) =>
  `runs that hung (ux-sandbox-exec missed the command's end, killed after ${HANG_MS / 1000} s): ${hangs.join(', ')}`;

describe('the proxied sandbox never misses its command’s end', () => {
  it('ux sandbox --allow-domain … -- env, 150 runs', async () => {
    const { hangs, failures } = await stress(150, SANDBOX);
    expect(hangs, hangMessage(hangs)).toEqual([]);
    expect(failures).toEqual([]);
  }, 600_000);

  it('ux sandbox --allow-domain … -- env under CPU load, 60 runs', async () => {
    cpuLoad();
    const { hangs, failures } = await stress(60, SANDBOX);
    expect(hangs, hangMessage(hangs)).toEqual([]);
    expect(failures).toEqual([]);
  }, 600_000);

  it('ux exec --allow-domain … -- env, 24 runs', async () => {
    const { hangs, failures } = await stress(24, EXEC);
    expect(hangs, hangMessage(hangs)).toEqual([]);
    expect(failures).toEqual([]);
  }, 600_000);
});
