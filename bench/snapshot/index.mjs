// bench/snapshot: what a heavy login file costs each command, with and without the shell snapshot.
//   snapshot.true.median_ms    exec_command `true` (a login command) with shell_snapshot on: the login
//                              file ran once, at the first command, then is sourced from the snapshot
//   snapshot.no_login_ms       the same with `login: false` (no login files at all): the baseline
//   snapshot.true.ratio        snapshot vs no login                                     (target <= 1.3)
//   snapshot.login_ms / .login_ratio  without the snapshot, every command runs the login file (today's path)
// The login file is a temporary HOME's .bashrc that takes 100 ms (`sleep 0.1`) and prints a line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planTools } from '@ux/features';
import { createOrchestrator } from '@ux/orchestrator';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createLocalSpawner } from '@ux/spawn';
import { createUnifiedExec } from '@ux/unified-exec';
import { closeInheritedFds } from '../lib/close-inherited-fds.mjs';
import { alternate, report, timeMs } from '../lib/report.mjs';

closeInheritedFds();
const home = mkdtempSync(join(tmpdir(), 'ux-bench-snapshot-'));
writeFileSync(join(home, '.bashrc'), 'sleep 0.1\necho "rc: welcome"\nexport FROM_RC=1\n');
writeFileSync(join(home, '.bash_profile'), '. ~/.bashrc\n');
const spawner = createLocalSpawner();

function door(shellSnapshot) {
  return createUnifiedExec({
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
    spawner,
    toolPlan: planTools({
      flags: {
        shell_tool: true,
        unified_exec: true,
        shell_zsh_fork: false,
        unified_exec_zsh_fork: false,
        shell_snapshot: shellSnapshot,
      },
      platform: process.platform,
    }),
    cwd: home,
    userShell: '/bin/bash',
    baseEnvironment: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home },
    shellSnapshotDir: join(home, 'snapshots'),
  });
}

let calls = 0;
const run = (exec, extra = {}) =>
  timeMs(async () => {
    const response = await exec.execCommand({ cmd: 'true', ...extra }, { callId: `b${++calls}` });
    if (!response.text.includes('Process exited with code 0')) throw new Error(response.text);
  });

const snapshotted = door(true);
const plain = door(false);
const withSnapshot = await alternate({
  subject: () => run(snapshotted),
  baseline: () => run(plain, { login: false }),
  rounds: 40,
  warmup: 3,
});
report('snapshot.true.median_ms', withSnapshot.subject, 'ms');
report('snapshot.no_login_ms', withSnapshot.baseline, 'ms');
report('snapshot.true.ratio', withSnapshot.subject / withSnapshot.baseline, 'x', '<=1.3');
const login = await alternate({
  subject: () => run(plain),
  baseline: () => run(plain, { login: false }),
  rounds: 10,
  warmup: 1,
});
report('snapshot.login_ms', login.subject, 'ms');
report('snapshot.login_ratio', login.subject / login.baseline, 'x');

await snapshotted.shutdown();
await plain.shutdown();
rmSync(home, { recursive: true, force: true });
