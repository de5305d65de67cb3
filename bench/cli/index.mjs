// bench/cli: whole-process cost of the ux command, against bare `node` startup in the same run.
//   cli.sandbox_true_ms   `ux sandbox -- true`, median (target <= 150 ms)
//   cli.exec_true_ms      `ux exec -- true`, median (target <= 150 ms)
//   cli.node_startup_ms   `node -e 0`, the floor both stand on
// Shell snapshots across processes, with a HOME whose login files take 100 ms:
//   cli.exec_warm.ratio        `ux exec -- true` with the snapshot cached vs `ux sandbox -- true` (<= 1.3)
//   cli.exec_cold.ratio        the same with the cache emptied before each run vs `ux exec` with
//                              shell_snapshot = false (the login files run once, for the command)
//   cli.exec_cold.vs_sandbox   the cold run vs `ux sandbox -- true`
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uxRuntimeRoot } from '@ux/protocol-utils';
import { alternate, median, report, timeMs } from '../lib/report.mjs';
import { UX_BIN } from '../lib/ux-cli.mjs';

const ux = UX_BIN;
const cwd = mkdtempSync(join(tmpdir(), 'ux-bench-cli-'));
const home = mkdtempSync(join(tmpdir(), 'ux-bench-cli-home-'));
const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, UX_HOME: home, SHELL: '/bin/bash' };

const run = (args, runEnv = env) =>
  timeMs(
    () =>
      new Promise((resolve, reject) => {
        const child = spawn(process.execPath, args, {
          cwd,
          env: runEnv,
          stdio: ['ignore', 'ignore', 'pipe'],
        });
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

// A login file as slow as a real one (pyenv, nvm): 100 ms. The homes lie outside /tmp, which the
// sandbox replaces with a private one (the login files would not be there for the command).
const homeParent = existsSync('/var/tmp') ? '/var/tmp' : tmpdir();
const slowHome = mkdtempSync(join(homeParent, 'ux-bench-cli-slow-'));
writeFileSync(join(slowHome, '.bashrc'), 'sleep 0.1\nexport FROM_RC=1\n');
writeFileSync(join(slowHome, '.bash_profile'), '. ~/.bashrc\n');
const slowEnv = { ...env, HOME: slowHome, UX_HOME: slowHome };
const offHome = mkdtempSync(join(homeParent, 'ux-bench-cli-off-'));
for (const name of ['.bashrc', '.bash_profile'])
  writeFileSync(join(offHome, name), readFileSync(join(slowHome, name)));
writeFileSync(join(offHome, 'config.toml'), '[features]\nshell_snapshot = false\n');
const offEnv = { ...env, HOME: offHome, UX_HOME: offHome };
const cacheDir = join(uxRuntimeRoot(), 'shell-snapshot-cache');
/** Removes this benchmark's cached snapshots (their headers name its HOME); others' stay. */
const forget = () => {
  let names = [];
  try {
    names = readdirSync(cacheDir);
  } catch {}
  for (const name of names)
    if (name.endsWith('.snap') && readFileSync(join(cacheDir, name), 'latin1').includes(slowHome))
      rmSync(join(cacheDir, name), { force: true });
};
{
  // The figures mean something only if the login file runs for these commands (or its snapshot is used).
  const { execFileSync } = await import('node:child_process');
  for (const runEnv of [slowEnv, offEnv]) {
    const out = execFileSync(process.execPath, [ux, 'exec', '--', 'echo rc=$FROM_RC'], { cwd, env: runEnv });
    if (!String(out).includes('rc=1')) throw new Error(`the login file did not run for the command: ${out}`);
  }
}
const sandboxTrue = () => run([ux, 'sandbox', '--', 'true'], slowEnv);
const execTrue = () => run([ux, 'exec', '--', 'true'], slowEnv);
const warm = await alternate({ subject: execTrue, baseline: sandboxTrue, rounds: 20, warmup: 2 });
const cold = await alternate({
  subject: () => {
    forget();
    return execTrue();
  },
  baseline: () => run([ux, 'exec', '--', 'true'], offEnv),
  rounds: 12,
  warmup: 1,
});
report('cli.exec_warm_ms', warm.subject, 'ms');
report('cli.exec_warm.sandbox_ms', warm.baseline, 'ms');
report('cli.exec_warm.ratio', warm.subject / warm.baseline, 'x', '<=1.3');
report('cli.exec_cold_ms', cold.subject, 'ms');
report('cli.exec_no_snapshot_ms', cold.baseline, 'ms');
report('cli.exec_cold.ratio', cold.subject / cold.baseline, 'x', '<=1.0');
report('cli.exec_cold.vs_sandbox', cold.subject / warm.baseline, 'x');
forget();
for (const dir of [cwd, home, slowHome, offHome]) rmSync(dir, { recursive: true, force: true });
