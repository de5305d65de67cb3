// bench/guard: what the search for repositories a command created costs each sandboxed command. After
// every command the bwrap backend looks through the plan's writable roots (`findRepositories`: bounded,
// links not followed, `node_modules` skipped) for repositories made during the session, so it can check
// and protect them. The same door runs `true` under workspace-write (the temp dirs not writable, so
// only the workspace is searched), alternating, in an empty workspace (the plain command) and in:
//   guard.repo.ratio         a workspace with this repository's directories (node_modules and .git
//                            left out, as the search leaves them; no repository in it, so the plans
//                            are the same and only the search differs)
//   guard.tree10k.ratio      a workspace of 10 000 directories (half the search's budget of 20 000)
// and the search alone, without the door:
//   guard.scan.<name>_ms, guard.scan.<name>_directories
// then what chains and kept links cost the native guard (chains.mjs: guard.chain.*; also runs alone,
// `node bench/guard/chains.mjs`).
import { mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { planTools } from '@ux/features';
import { createOrchestrator } from '@ux/orchestrator';
import { effectivePolicyFromSandboxPolicy } from '@ux/protocol/core';
import { createSandboxRegistry, nodeFsView, resolveSandboxLayout } from '@ux/protocol-utils';
import { createBwrapSandbox, trackCreatedRepositories } from '@ux/sandbox-bwrap';
import { createLocalSpawner } from '@ux/spawn';
import { createUnifiedExec } from '@ux/unified-exec';
import { closeInheritedFds } from '../lib/close-inherited-fds.mjs';
import { alternate, median, report, timeMs } from '../lib/report.mjs';
import { benchChains } from './chains.mjs';

closeInheritedFds();

const repoRoot = realpathSync(join(dirname(fileURLToPath(import.meta.url)), '..', '..'));
const scratch = realpathSync(mkdtempSync(join(tmpdir(), 'ux-bench-guard-')));
const empty = join(scratch, 'empty');
const repo = join(scratch, 'repo');
const tree = join(scratch, 'tree');
mkdirSync(empty);
for (let i = 0; i < 100; i++)
  for (let j = 0; j < 99; j++) mkdirSync(join(tree, `d${i}`, `e${j}`), { recursive: true });
// This repository's directories, as the search sees them.
const mirror = (from, to) => {
  mkdirSync(to, { recursive: true });
  for (const entry of readdirSync(from, { withFileTypes: true }))
    if (entry.isDirectory() && entry.name !== 'node_modules' && entry.name !== '.git')
      mirror(join(from, entry.name), join(to, entry.name));
};
mirror(repoRoot, repo);

const env = { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: process.env.HOME ?? '/root' };
const backend = createBwrapSandbox();
const probe = await backend.probe();
if (!probe.available) {
  console.error(`bench/guard: bubblewrap cannot run here: ${probe.reason} (${probe.fix})`);
  process.exit(1);
}
const sandboxPolicy = {
  type: 'workspace-write',
  writable_roots: [],
  network_access: false,
  exclude_tmpdir_env_var: true,
  exclude_slash_tmp: true,
};
const toolPlan = planTools({
  flags: { shell_tool: true, unified_exec: true, shell_zsh_fork: false, unified_exec_zsh_fork: false },
  platform: process.platform,
});
const spawner = createLocalSpawner();
const makeDoor = (cwd) =>
  createUnifiedExec({
    orchestrator: createOrchestrator({
      sandboxRegistry: createSandboxRegistry({ bwrap: backend }),
      approvalPolicy: 'never',
      policy: sandboxPolicy,
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

let calls = 0;
const runTrue = (door) => () =>
  timeMs(async () => {
    const response = await door.execCommand({ cmd: 'true', login: false }, { callId: `bench-${++calls}` });
    if (!response.text.includes('Process exited with code 0')) throw new Error(response.text);
  });

const plain = makeDoor(empty);
for (const [name, cwd] of [
  ['repo', repo],
  ['tree10k', tree],
]) {
  const door = makeDoor(cwd);
  const result = await alternate({ subject: runTrue(door), baseline: runTrue(plain), rounds: 60, warmup: 6 });
  report(`guard.${name}.true_ms`, result.subject, 'ms');
  report(`guard.${name}.plain_true_ms`, result.baseline, 'ms');
  report(`guard.${name}.ratio`, result.subject / result.baseline, 'x');
  await door.shutdown();
}

// The search alone, as the backend runs it after a command.
for (const [name, cwd] of [
  ['repo', repo],
  ['tree10k', tree],
]) {
  const policy = effectivePolicyFromSandboxPolicy(sandboxPolicy);
  const layout = resolveSandboxLayout(policy, { cwd }, nodeFsView());
  const tracker = trackCreatedRepositories({ startedAt: Date.now() });
  const times = [];
  let directories = 0;
  for (let i = 0; i < 25; i++) {
    const start = process.hrtime.bigint();
    directories = tracker.scan(layout, policy, Date.now()).directories;
    if (i >= 5) times.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  report(`guard.scan.${name}_ms`, median(times), 'ms');
  report(`guard.scan.${name}_directories`, directories);
}

await plain.shutdown();
await backend.close();
await benchChains(scratch);
rmSync(scratch, { recursive: true, force: true });
process.exit(0);
