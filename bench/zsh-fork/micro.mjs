// bench/zsh-fork/micro.mjs: where one intercepted exec's time goes, without a sandbox. The same patched
// zsh loop of N `/bin/true` four ways, alternating: plain; EXEC_WRAPPER = a static no-op shim (the exec
// floor); the real wrapper with the broker and a Node handler that answers Run every time (the full
// hop); the real wrapper with the broker answering from its session cache (Node asked once).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLocalSpawner } from '@ux/spawn';
import { ensureZshForkCache, startEscalationBroker } from '@ux/zsh-fork';
import { closeInheritedFds } from '../lib/close-inherited-fds.mjs';
import { median, report, timeMs } from '../lib/report.mjs';

closeInheritedFds();
const EXECS = Number(process.env.EXECS ?? 500);
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const { zshPath: zsh } = await ensureZshForkCache();
const cwd = mkdtempSync(join(tmpdir(), 'ux-bench-zshm-'));
const broker = await startEscalationBroker({ runtimeDir: cwd });
// UX_BENCH_NATIVE_DIR: an earlier build's binaries, measured in the same run as `before` (Node answers).
const nativeDir = process.env.UX_BENCH_NATIVE_DIR;
const before = nativeDir
  ? await startEscalationBroker({
      runtimeDir: cwd,
      brokerPath: join(nativeDir, 'ux-escalate-broker'),
      wrapperPath: join(nativeDir, 'ux-execve-wrapper'),
    })
  : undefined;
const spawner = createLocalSpawner();
const shim = join(cwd, 'shim');
writeFileSync(
  `${shim}.c`,
  '#include <unistd.h>\nint main(int c, char **v) { (void)c; execv(v[1], v + 2); return 127; }\n',
);
execFileSync(process.env.CC || 'cc', ['-O2', '-static', '-o', shim, `${shim}.c`]);
const script = `i=0; while (( i < ${EXECS} )); do /bin/true; (( i++ )); done`;
const PATH = '/usr/bin:/bin';

async function loop(env, escalation) {
  const child = await spawner.spawn({
    argv: [zsh, '-fc', script],
    cwd,
    env: { PATH, ...env },
    tty: false,
    stdin: 'closed',
    ...(escalation ? { escalation } : {}),
  });
  const status = await child.exited;
  if (status.exitCode !== 0) throw new Error(`exit ${status.exitCode}`);
}
const variants = {
  plain: () => loop({}),
  ...(before
    ? {
        before: async () => {
          const session = await before.openSession(() => ({ action: 'run' }));
          await loop(session.env, session.spawnEscalation);
          await session.close();
        },
      }
    : {}),
  shim: () => loop({ EXEC_WRAPPER: shim }),
  node: async () => {
    const session = await broker.openSession(() => ({ action: 'run' }));
    await loop(session.env, session.spawnEscalation);
    await session.close();
  },
  cached: async () => {
    const session = await broker.openSession(() => ({ action: 'run', cache: true }));
    await loop(session.env, session.spawnEscalation);
    await session.close();
    if (session.cachedRuns !== EXECS - 1) throw new Error(`${session.cachedRuns} cached runs`);
  },
};
const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
const names = Object.keys(variants);
for (let round = -1; round < ROUNDS; round++) {
  const order = round % 2 ? names : [...names].reverse();
  for (const name of order) {
    const ms = await timeMs(variants[name]);
    if (round >= 0) times[name].push(ms);
  }
}
const m = Object.fromEntries(names.map((k) => [k, median(times[k])]));
for (const name of names) report(`zsh_fork.micro.${name}_per_exec_ms`, m[name] / EXECS, 'ms');
report('zsh_fork.micro.floor_ms', (m.shim - m.plain) / EXECS, 'ms');
report('zsh_fork.micro.node_overhead_ms', (m.node - m.plain) / EXECS, 'ms');
report('zsh_fork.micro.cached_overhead_ms', (m.cached - m.plain) / EXECS, 'ms');
if (before) report('zsh_fork.micro.before_overhead_ms', (m.before - m.plain) / EXECS, 'ms');
// The fastest round of each: what the path costs when the machine's other load leaves it alone.
const best = Object.fromEntries(names.map((k) => [k, Math.min(...times[k])]));
report('zsh_fork.micro.best.floor_ms', (best.shim - best.plain) / EXECS, 'ms');
report('zsh_fork.micro.best.node_overhead_ms', (best.node - best.plain) / EXECS, 'ms');
report('zsh_fork.micro.best.cached_overhead_ms', (best.cached - best.plain) / EXECS, 'ms');
if (before) report('zsh_fork.micro.best.before_overhead_ms', (best.before - best.plain) / EXECS, 'ms');
console.log(
  `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
await broker.close();
await before?.close();
rmSync(cwd, { recursive: true, force: true });
