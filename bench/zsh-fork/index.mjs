// bench/zsh-fork: the cost of exec interception, in one run, with the real patched zsh, broker and bwrap.
//   zsh_fork.script_ms / direct.script_ms   a script running /bin/true 500 times, sandboxed, through
//                                           the door: ZshFork (every exec asks the broker, Run path)
//                                           and Direct (the same zsh, no interception)
//   zsh_fork.per_exec_overhead_ms           (ZshFork − Direct) / 500                (target <= 1.0)
//                                           the same exec 500 times: Node decides the first, the
//                                           broker answers the repeats from its session cache
//   zsh_fork.distinct.per_exec_overhead_ms  the same loop with `/bin/true $i`: every exec differs, so
//                                           every one makes the whole trip to Node (the cache's miss
//                                           path), against Direct running the same loop
//   zsh_fork.exec_floor_ms                  what one extra exec of a static do-nothing wrapper costs
//                                           here (the same zsh loop, unsandboxed, EXEC_WRAPPER = a
//                                           static `execv(argv[1], argv+2)`): the part of the overhead
//                                           the wrapper design itself sets, whatever the broker does
//   zsh_fork.broker_ms                      per_exec_overhead − exec_floor: the socket hand-off, the
//                                           broker and the decision in Node
//   zsh_fork.escalated_exec_ms              one escalated exec (an allow rule), its wall time in the
//                                           script, against the same exec run in place
// The patched zsh comes from the same cache the tests use (built on first use).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { planTools } from '@ux/features';
import { createExecPolicy, createOrchestrator, parseRulesFile } from '@ux/orchestrator';
import { createSandboxRegistry } from '@ux/protocol';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { createUnifiedExec } from '@ux/unified-exec';
import { ensureZshForkCache, startEscalationBroker } from '@ux/zsh-fork';
import { closeInheritedFds } from '../lib/close-inherited-fds.mjs';
import { alternate, report, timeMs } from '../lib/report.mjs';

closeInheritedFds();
const EXECS = 500;
// Built once per patch (about 70 s), then reused from ~/.cache/ux/zsh-fork.
const { zshPath: zsh } = await ensureZshForkCache();
const cwd = mkdtempSync(join(tmpdir(), 'ux-bench-zsh-'));
const broker = await startEscalationBroker({ runtimeDir: cwd });
const backend = createBwrapSandbox();
const spawner = createLocalSpawner();

function door(zshFork, rules = '') {
  const flags = {
    shell_tool: true,
    unified_exec: true,
    shell_zsh_fork: zshFork,
    unified_exec_zsh_fork: zshFork,
  };
  const plan = planTools({
    flags,
    platform: process.platform,
    zshFork: { zshPath: zsh, execveWrapperPath: broker.wrapperPath },
  });
  return createUnifiedExec({
    orchestrator: createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ bwrap: backend }),
      approvalPolicy: 'never',
      policy: { type: 'workspace-write', writable_roots: [], network_access: false },
      execPolicy: createExecPolicy(parseRulesFile(rules, 'bench.rules')),
      reviewer: {
        specificationVersion: 'ux-reviewer-v1',
        id: 'none',
        review: async () => ({ type: 'denied' }),
      },
    }),
    spawner,
    toolPlan: plan,
    cwd,
    // Direct mode runs the same zsh, so the difference is the interception alone.
    userShell: zsh,
    baseEnvironment: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/root' },
    escalationBroker: broker,
  });
}

let calls = 0;
const run = (exec, cmd) =>
  timeMs(async () => {
    const response = await exec.execCommand(
      { cmd, login: false, yield_time_ms: 60_000 },
      { callId: `b${++calls}` },
    );
    if (!response.text.includes('Process exited with code 0')) throw new Error(response.text);
  });

const forked = door(true, 'prefix_rule(pattern=["sleep"], decision="allow")\n');
const direct = door(false);
const script = `i=0; while (( i < ${EXECS} )); do /bin/true; (( i++ )); done`;
const loop = await alternate({
  subject: () => run(forked, script),
  baseline: () => run(direct, script),
  rounds: 5,
  warmup: 1,
});
report('zsh_fork.script_ms', loop.subject, 'ms');
report('direct.script_ms', loop.baseline, 'ms');
const overhead = (loop.subject - loop.baseline) / EXECS;
report('zsh_fork.per_exec_overhead_ms', overhead, 'ms', '<=1.0');

const distinctScript = `i=0; while (( i < ${EXECS} )); do /bin/true $i; (( i++ )); done`;
const distinct = await alternate({
  subject: () => run(forked, distinctScript),
  baseline: () => run(direct, distinctScript),
  rounds: 5,
  warmup: 1,
});
report('zsh_fork.distinct.per_exec_overhead_ms', (distinct.subject - distinct.baseline) / EXECS, 'ms');

// The floor: the same loop in the patched zsh, no sandbox, with a static wrapper that only execs.
const shimSource = join(cwd, 'shim.c');
const shim = join(cwd, 'shim');
writeFileSync(
  shimSource,
  '#include <unistd.h>\nint main(int c, char **v) { (void)c; execv(v[1], v + 2); return 127; }\n',
);
execFileSync(process.env.CC || 'cc', ['-O2', '-static', '-o', shim, shimSource]);
const loopOnce = (env) => () =>
  timeMs(async () => {
    const result = spawnSync(zsh, ['-fc', script], { env: { PATH: '/usr/bin:/bin', ...env } });
    if (result.status !== 0) throw new Error(String(result.stderr));
  });
const floor = await alternate({
  subject: loopOnce({ EXEC_WRAPPER: shim }),
  baseline: loopOnce({}),
  rounds: 5,
  warmup: 1,
});
const floorMs = (floor.subject - floor.baseline) / EXECS;
report('zsh_fork.exec_floor_ms', floorMs, 'ms');
report('zsh_fork.broker_ms', overhead - floorMs, 'ms');

// One escalated exec (`sleep 0` allowed by a rule: the broker runs it outside) against one in place.
const escalated = await alternate({
  subject: () => run(forked, '/bin/sleep 0'),
  baseline: () => run(forked, '/bin/true'),
  rounds: 20,
  warmup: 2,
});
report('zsh_fork.escalated_exec_ms', escalated.subject - escalated.baseline, 'ms');

console.log(
  `load average ${loadavg()
    .map((load) => load.toFixed(2))
    .join(' ')}`,
);
await forked.shutdown();
await direct.shutdown();
await broker.close();
await backend.close();
rmSync(cwd, { recursive: true, force: true });
