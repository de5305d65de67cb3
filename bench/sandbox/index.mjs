// bench/sandbox: the cost of bubblewrap + seccomp on the door, in one run.
//   sandbox.true.median_ms       exec_command of `true` under workspace-write through bwrap
//   sandbox.unsandboxed_median_ms the same command through the same door with danger-full-access
//   sandbox.overhead_ms          the difference of the two medians (target <= 15 ms)
//   sandbox.true.ratio           sandboxed / unsandboxed
//   sandbox.plan_ms              planning alone (policy → bwrap argv), median
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { planTools } from '@ux/features';
import { createOrchestrator } from '@ux/orchestrator';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { createUnifiedExec } from '@ux/unified-exec';
import { closeInheritedFds } from '../lib/close-inherited-fds.mjs';
import { alternate, median, report, timeMs } from '../lib/report.mjs';

// As in bench/spawn: measure the direct path, not the cost of descriptors this shell leaked to us.
closeInheritedFds();

const cwd = realpathSync(mkdtempSync(join(tmpdir(), 'ux-bench-sandbox-')));
const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/root' };
const backend = createBwrapSandbox();
const probe = await backend.probe();
if (!probe.available) {
  console.error(`bench/sandbox: bubblewrap cannot run here: ${probe.reason} (${probe.fix})`);
  process.exit(1);
}
const toolPlan = planTools({
  flags: { shell_tool: true, unified_exec: true, shell_zsh_fork: false, unified_exec_zsh_fork: false },
  platform: process.platform,
});
const spawner = createLocalSpawner();
const makeDoor = (policy) =>
  createUnifiedExec({
    orchestrator: createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ bwrap: backend }),
      approvalPolicy: 'never',
      policy,
      reviewer: {
        specificationVersion: 'ux-reviewer-v1',
        id: 'none',
        review: async () => ({ type: 'denied' }),
      },
    }),
    spawner,
    toolPlan,
    cwd,
    userShell: '/bin/bash',
    baseEnvironment: env,
  });
const sandboxed = makeDoor({
  type: 'workspace-write',
  writable_roots: [],
  network_access: false,
  exclude_tmpdir_env_var: true,
  exclude_slash_tmp: false,
});
const unsandboxed = makeDoor({ type: 'danger-full-access' });

let calls = 0;
const runTrue = (door) => () =>
  timeMs(async () => {
    const response = await door.execCommand({ cmd: 'true', login: false }, { callId: `bench-${++calls}` });
    if (!response.text.includes('Process exited with code 0')) throw new Error(response.text);
  });
const result = await alternate({
  subject: runTrue(sandboxed),
  baseline: runTrue(unsandboxed),
  rounds: 200,
  warmup: 20,
});
report('sandbox.true.median_ms', result.subject, 'ms');
report('sandbox.unsandboxed_median_ms', result.baseline, 'ms');
report('sandbox.overhead_ms', result.subject - result.baseline, 'ms', '<=15');
report('sandbox.true.ratio', result.subject / result.baseline, 'x');

// Planning alone: what the backend adds before anything is spawned.
const planTimes = [];
for (let i = 0; i < 220; i++) {
  const time = await timeMs(() =>
    backend.plan({
      argv: ['/bin/bash', '-c', 'true'],
      cwd,
      env,
      tty: false,
      policy: {
        fileSystem: {
          kind: 'restricted',
          entries: [
            { path: { type: 'special', value: 'root' }, access: 'read' },
            { path: { type: 'special', value: 'cwd' }, access: 'write' },
          ],
        },
        network: 'restricted',
      },
    }),
  );
  if (i >= 20) planTimes.push(time);
}
report('sandbox.plan_ms', median(planTimes), 'ms');

await sandboxed.shutdown();
await unsandboxed.shutdown();
rmSync(cwd, { recursive: true, force: true });
process.exit(0);
