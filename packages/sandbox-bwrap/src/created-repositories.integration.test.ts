// Which repositories a command created, found after it on the real file system, and remembered so the
// backend's later plans protect them; through createBwrapSandbox with real bubblewrap at the end.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EffectivePolicy } from '@ux/protocol/core';
import { nodeFsView, resolveSandboxLayout, type SandboxLayout } from '@ux/protocol-utils';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createBwrapSandbox } from './create-bwrap-sandbox.js';
import { findGitTemplateDir, trackCreatedRepositories } from './created-repositories.js';

useLeakCheck();

const ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'u',
  GIT_AUTHOR_EMAIL: 'u@example.invalid',
  GIT_COMMITTER_NAME: 'u',
  GIT_COMMITTER_EMAIL: 'u@example.invalid',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8' });
const layoutOf = (...roots: string[]) =>
  ({ writableRoots: roots.map((root) => ({ root, readOnly: [] })) }) as unknown as SandboxLayout;
const POLICY: EffectivePolicy = {
  fileSystem: {
    kind: 'restricted',
    entries: [
      { path: { type: 'special', value: 'root' }, access: 'read' },
      { path: { type: 'special', value: 'cwd' }, access: 'write' },
    ],
  },
  network: 'restricted',
};
/** Past the slack the scan allows file-system clocks. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 120));

describe('trackCreatedRepositories', () => {
  it('finds repositories made since the backend started, below the roots, not the roots themselves', async () => {
    const ws = tempDir('ux-created-ws-');
    git(ws, 'init', '-q');
    mkdirSync(join(ws, 'old'));
    git(join(ws, 'old'), 'init', '-q', 'repo');
    await settle();
    const tracker = trackCreatedRepositories({ startedAt: Date.now() });
    await settle();
    mkdirSync(join(ws, 'vendor'));
    git(join(ws, 'vendor'), 'init', '-q', 'x');
    git(ws, 'commit', '-q', '--allow-empty', '-m', 'the root repository changes too');

    const scan = tracker.scan(layoutOf(ws), POLICY, Date.now());
    expect(scan.checks).toEqual([{ root: ws, gitDir: 'vendor/x/.git', workTree: join(ws, 'vendor', 'x') }]);
    expect(scan.workTrees).toEqual([join(ws, 'vendor', 'x')]);
    expect(scan.truncated).toBe(false);
  });

  it('an older repository the plan did not protect is checked when its configuration changed during the command', async () => {
    const ws = tempDir('ux-created-ws-');
    git(ws, 'init', '-q', 'old');
    git(ws, 'init', '-q', 'known');
    git(ws, 'init', '-q', 'untouched');
    await settle();
    const tracker = trackCreatedRepositories({ startedAt: Date.now() });
    await settle();
    const plannedAt = Date.now();
    await settle();
    git(join(ws, 'old'), 'config', 'core.pager', 'evil');
    git(join(ws, 'known'), 'config', 'core.pager', 'evil'); // its config was read-only in the sandbox
    // A new pointer to an older repository that nothing changed: the pointer is new, the config is not.
    mkdirSync(join(ws, 'pointer'));
    writeFileSync(join(ws, 'pointer', '.git'), 'gitdir: ../untouched/.git\n');
    const scan = tracker.scan(layoutOf(ws), { ...POLICY, knownRepositories: [join(ws, 'known')] }, plannedAt);
    expect(scan.checks.map((check) => check.gitDir)).toEqual(['old/.git']);
    expect(scan.workTrees).toEqual([join(ws, 'old'), join(ws, 'pointer')]);
  });

  it('remembered repositories join the policy, and a plan that has them does not look at them again', async () => {
    const ws = tempDir('ux-created-ws-');
    const tracker = trackCreatedRepositories({ startedAt: Date.now() - 1000 });
    git(ws, 'init', '-q', 'x');
    const first = tracker.scan(layoutOf(ws), POLICY, Date.now());
    expect(first.workTrees).toEqual([join(ws, 'x')]);
    tracker.remember(first.workTrees);
    expect(tracker.policyFor(POLICY).knownRepositories).toEqual([join(ws, 'x')]);
    expect(tracker.policyFor({ ...POLICY, knownRepositories: ['/a'] }).knownRepositories).toEqual([
      '/a',
      join(ws, 'x'),
    ]);
    // A command planned with it protected does not look at it again; one planned before it was
    // remembered (still running when it was made) does.
    expect(tracker.scan(layoutOf(ws), tracker.policyFor(POLICY), Date.now()).checks).toEqual([]);
    expect(tracker.scan(layoutOf(ws), POLICY, Date.now()).checks.map((check) => check.gitDir)).toEqual([
      'x/.git',
    ]);
  });

  it('a .git file: the git directory it points to is checked when a command could write it; a FIFO is not read', async () => {
    const ws = tempDir('ux-created-ws-');
    const outside = tempDir('ux-created-outside-');
    git(outside, 'init', '-q', 'elsewhere');
    const tracker = trackCreatedRepositories({ startedAt: Date.now() - 1000 });
    git(ws, 'init', '-q', 'store');
    mkdirSync(join(ws, 'inside'));
    writeFileSync(join(ws, 'inside', '.git'), 'gitdir: ../store/.git\n');
    mkdirSync(join(ws, 'pointing-out'));
    writeFileSync(join(ws, 'pointing-out', '.git'), `gitdir: ${join(outside, 'elsewhere', '.git')}\n`);
    mkdirSync(join(ws, 'fifo'));
    execFileSync('mkfifo', [join(ws, 'fifo', '.git')]);

    const scan = tracker.scan(layoutOf(ws), POLICY, Date.now());
    expect(scan.checks).toEqual([
      { root: ws, gitDir: 'store/.git', workTree: join(ws, 'inside') },
      { root: ws, gitDir: 'store/.git', workTree: join(ws, 'store') },
    ]);
    expect(scan.workTrees).toEqual([join(ws, 'inside'), join(ws, 'pointing-out'), join(ws, 'store')]);
  });

  it('a new .git file pointing at a git directory the plan protected does not get that one checked', async () => {
    const ws = tempDir('ux-created-ws-');
    git(ws, 'init', '-q');
    git(ws, 'commit', '-q', '--allow-empty', '-m', 'x');
    const layout = resolveSandboxLayout(POLICY, { cwd: ws }, nodeFsView());
    const tracker = trackCreatedRepositories({ startedAt: Date.now() - 1000 });
    mkdirSync(join(ws, 'sub'));
    writeFileSync(join(ws, 'sub', '.git'), 'gitdir: ../.git\n');
    git(ws, 'worktree', 'add', '-q', join(ws, 'wt'));
    const scan = tracker.scan(layout, POLICY, Date.now());
    // The linked worktree's pointers are checked; the repository it shares was read-only all along.
    expect(scan.checks).toEqual([
      { root: ws, gitDir: '.git/worktrees/wt', workTree: join(ws, 'wt'), linkedWorktree: true },
    ]);
    expect(scan.workTrees).toEqual([join(ws, 'sub'), join(ws, 'wt')]);
  });

  it('a whole-disk writable root is not scanned', () => {
    const tracker = trackCreatedRepositories({ startedAt: Date.now() });
    expect(tracker.scan(layoutOf('/'), POLICY, Date.now())).toEqual({
      checks: [],
      workTrees: [],
      directories: 0,
      truncated: false,
    });
  });

  it('git’s template directory is found where git keeps it', () => {
    const found = findGitTemplateDir({});
    const execPath = spawnSync('git', ['--exec-path'], { encoding: 'utf8' }).stdout.trim();
    expect(found).toBe(join(execPath, '..', '..', 'share', 'git-core', 'templates'));
    expect(findGitTemplateDir({ GIT_TEMPLATE_DIR: found })).toBe(found);
    expect(findGitTemplateDir({ GIT_TEMPLATE_DIR: 'relative' })).toBe(found);
  });
});

describe('the bwrap backend', () => {
  it('a worktree a command adds works; one whose commondir it rewrote has it taken, and the shared config is left alone', async () => {
    const ws = tempDir('ux-created-ws-');
    git(ws, 'init', '-q');
    git(ws, 'config', 'alias.mine', 'status'); // the user's own key, in the repository's own config
    git(ws, 'commit', '-q', '--allow-empty', '-m', 'x');
    const backend = createBwrapSandbox({ quarantineDir: join(tempDir('ux-created-q-'), 'q') });
    onTestFinished(() => backend.close());
    const plan = await backend.plan({
      argv: [
        '/bin/bash',
        '-c',
        'git worktree add -q wt && git worktree add -q wt2 && echo /tmp/elsewhere > .git/worktrees/wt2/commondir && mkdir sub && echo "gitdir: ../.git" > sub/.git',
      ],
      cwd: ws,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ws, ...ENV },
      policy: POLICY,
      tty: false,
    });
    const notices: string[] = [];
    plan.onNotice?.((notice) => notices.push(notice.message));
    const [command, ...args] = plan.argv;
    const result = spawnSync(command!, args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8' });
    expect(result.status, result.stderr).toBe(0);
    await plan.cleanup?.();
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(
      /git repository .*\/\.git\/worktrees\/wt2 with commondir \(not the "\.\.\/\.\." git writes\)/,
    );
    expect(git(join(ws, 'wt'), 'log', '--format=%s')).toBe('x\n');
    expect(git(ws, 'config', 'alias.mine')).toBe('status\n');
  });

  it('a repository one command cloned into vendor/ is protected by the next plan like a known one', async () => {
    const ws = tempDir('ux-created-ws-');
    const backend = createBwrapSandbox();
    onTestFinished(() => backend.close());
    const run = async (script: string) => {
      const plan = await backend.plan({
        argv: ['/bin/bash', '-c', script],
        cwd: ws,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: ws, ...ENV },
        policy: POLICY,
        tty: false,
      });
      const notices: string[] = [];
      plan.onNotice?.((notice) => notices.push(notice.message));
      const [command, ...args] = plan.argv;
      const result = spawnSync(command!, args, { cwd: plan.cwd, env: plan.env, encoding: 'utf8' });
      await plan.cleanup?.();
      return { argv: plan.argv, result, notices };
    };
    const first = await run('mkdir vendor && git init -q vendor/x');
    expect(first.result.status, first.result.stderr).toBe(0);
    expect(first.notices).toEqual([]);
    const config = join(ws, 'vendor', 'x', '.git', 'config');
    expect(first.argv.join(' ')).not.toContain(`--ro-bind ${config} ${config}`);

    const second = await run('git -C vendor/x config core.pager evil; echo status $?');
    expect(second.argv.join(' ')).toContain(`--ro-bind ${config} ${config}`);
    expect(second.result.stdout).toMatch(/status [1-9]/);
    const pager = spawnSync('git', ['config', 'core.pager'], {
      cwd: join(ws, 'vendor', 'x'),
      env: ENV,
      encoding: 'utf8',
    });
    expect(pager.stdout).toBe('');
  });
});
