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
//   zsh_fork.exec_floor_ms                  what one extra exec costs here at the least (the same zsh
//                                           loop, unsandboxed, EXEC_WRAPPER = a 9 KiB program without
//                                           libc whose entry point only calls execve; x86_64): the part
//                                           no wrapper can avoid
//   zsh_fork.glibc_exec_floor_ms            the same with a static glibc `execv(argv[1], argv+2)`: what
//                                           glibc's start-up alone would add to every exec (why the
//                                           wrapper answers Run before it, native/ux-execve-fast.c)
//   zsh_fork.broker_ms                      per_exec_overhead − exec_floor: the socket hand-off and the
//                                           broker's answer (from its cache for a repeat)
//   zsh_fork.decide_exec_ms                 the orchestrator's decideExec alone, in process, for a
//                                           distinct exec (what the cache saves on a repeat)
//   zsh_fork.escalated_exec_ms              one escalated exec (an allow rule), its wall time in the
//                                           script, against the same exec run in place
// The patched zsh comes from the same cache the tests use (built on first use).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { planTools } from '@ux/features';
import { createExecPolicy, createOrchestrator, parseRulesFile } from '@ux/orchestrator';
import { createSandboxRegistry } from '@ux/protocol-utils';
import { createBwrapSandbox } from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { createUnifiedExec } from '@ux/unified-exec';
import { ensureZshForkCache, startEscalationBroker } from '@ux/zsh-fork';
import { closeInheritedFds } from '../lib/close-inherited-fds.mjs';
import { alternate, median, report, timeMs } from '../lib/report.mjs';

closeInheritedFds();
const EXECS = 500;
// Built once per patch (about 70 s), then reused from ~/.cache/ux/zsh-fork.
const { zshPath: zsh } = await ensureZshForkCache();
const cwd = mkdtempSync(join(tmpdir(), 'ux-bench-zsh-'));
// UX_BENCH_NATIVE_DIR: another build's ux-escalate-broker and ux-execve-wrapper (an earlier commit's,
// for a before/after comparison on the same machine and load).
const nativeDir = process.env.UX_BENCH_NATIVE_DIR;
const broker = await startEscalationBroker({
  runtimeDir: cwd,
  ...(nativeDir
    ? { brokerPath: join(nativeDir, 'ux-escalate-broker'), wrapperPath: join(nativeDir, 'ux-execve-wrapper') }
    : {}),
});
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
// The same without libc: _start takes argc, argv and envp from the stack and calls execve.
const bare = join(cwd, 'bare');
const x64 = process.arch === 'x64';
if (x64) {
  writeFileSync(
    `${bare}.c`,
    `__attribute__((naked, noreturn)) void _start(void) {
  __asm__ volatile("mov (%rsp), %rdi\\n lea 8(%rsp), %rsi\\n lea 8(%rsi,%rdi,8), %rdx\\n"
                   "mov 8(%rsi), %rdi\\n add $16, %rsi\\n mov $59, %eax\\n syscall\\n"
                   "mov $127, %edi\\n mov $60, %eax\\n syscall\\n");
}
`,
  );
  execFileSync(process.env.CC || 'cc', ['-O2', '-static', '-nostdlib', '-o', bare, `${bare}.c`]);
}
const loopOnce = (env) => () =>
  timeMs(async () => {
    const result = spawnSync(zsh, ['-fc', script], { env: { PATH: '/usr/bin:/bin', ...env } });
    if (result.status !== 0) throw new Error(String(result.stderr));
  });
const glibcFloor = await alternate({
  subject: loopOnce({ EXEC_WRAPPER: shim }),
  baseline: loopOnce({}),
  rounds: 5,
  warmup: 1,
});
const glibcFloorMs = (glibcFloor.subject - glibcFloor.baseline) / EXECS;
let floorMs = glibcFloorMs;
if (x64) {
  const floor = await alternate({
    subject: loopOnce({ EXEC_WRAPPER: bare }),
    baseline: loopOnce({}),
    rounds: 5,
    warmup: 1,
  });
  floorMs = (floor.subject - floor.baseline) / EXECS;
}
report('zsh_fork.exec_floor_ms', floorMs, 'ms');
report('zsh_fork.glibc_exec_floor_ms', glibcFloorMs, 'ms');
report('zsh_fork.broker_ms', overhead - floorMs, 'ms');

// The decision in Node for a distinct exec each time, without the trip (what a repeat is spared).
const decider = createOrchestrator({
  sandboxRegistry: createSandboxRegistry({ bwrap: backend }),
  approvalPolicy: 'never',
  policy: { type: 'workspace-write', writable_roots: [], network_access: false },
  execPolicy: createExecPolicy(
    parseRulesFile('prefix_rule(pattern=["sleep"], decision="allow")\n', 'bench.rules'),
  ),
  reviewer: { specificationVersion: 'ux-reviewer-v1', id: 'none', review: async () => ({ type: 'denied' }) },
});
const sandbox = { backend, policy: decider.policy };
const decide = (i) =>
  decider.decideExec({
    callId: 'b',
    file: '/bin/true',
    argv: ['/bin/true', String(i)],
    cwd,
    parent: { sandbox, projectRoot: cwd, env: { PATH: '/usr/bin:/bin' } },
  });
for (let i = 0; i < 200; i++) await decide(i);
const decisions = [];
for (let round = 0; round < 5; round++)
  decisions.push(
    await timeMs(async () => {
      for (let i = 0; i < EXECS; i++) await decide(i);
    }),
  );
report('zsh_fork.decide_exec_ms', median(decisions) / EXECS, 'ms');

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
