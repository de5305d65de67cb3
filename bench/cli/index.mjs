// bench/cli: whole-process cost of the ux command, against bare `node` startup in the same run.
//   cli.sandbox_true_ms   `ux sandbox -- true`, median (target <= 150 ms)
//   cli.exec_true_ms      `ux exec -- true`, median (target <= 150 ms)
//   cli.node_startup_ms   `node -e 0`, the floor both stand on
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { alternate, median, report, timeMs } from '../lib/report.mjs';

const ux = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'apps', 'cli', 'dist', 'ux.cjs');
const cwd = mkdtempSync(join(tmpdir(), 'ux-bench-cli-'));
const home = mkdtempSync(join(tmpdir(), 'ux-bench-cli-home-'));
const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, UX_HOME: home, SHELL: '/bin/bash' };

const run = (args) =>
  timeMs(
    () =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
        let stderr = '';
        child.stderr.on('data', (chunk) => {
          stderr += chunk;
        });
        child.on('close', (code) =>
          code === 0 ? resolve() : reject(new Error(`${args.join(' ')} exited ${code}: ${stderr}`)),
        );
      }),
  );

const node = () => run(['-e', '0']);
const sandbox = await alternate({
  subject: () => run([ux, 'sandbox', '--', 'true']),
  baseline: node,
  rounds: 30,
  warmup: 3,
});
const exec = await alternate({
  subject: () => run([ux, 'exec', '--', 'true']),
  baseline: node,
  rounds: 30,
  warmup: 3,
});
report('cli.sandbox_true_ms', sandbox.subject, 'ms', '<=150');
report('cli.exec_true_ms', exec.subject, 'ms', '<=150');
report('cli.node_startup_ms', median([sandbox.baseline, exec.baseline]), 'ms');
report('cli.sandbox_true.vs_node', sandbox.subject / sandbox.baseline, 'x');
report('cli.exec_true.vs_node', exec.subject / exec.baseline, 'x');
rmSync(cwd, { recursive: true, force: true });
rmSync(home, { recursive: true, force: true });
