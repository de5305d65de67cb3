// New git repositories, checked by the native ux-path-guard when a watch stops: what git itself writes
// passes untouched; anything else in the configuration surface is quarantined (one entry, one notice)
// and a config that held other keys is replaced. Real git, real directories; the sandbox is not needed
// here (apps/cli/test/git-in-sandbox.integration.test.ts does the same through `ux exec`).
import { execFileSync, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  builtGuard,
  collector,
  exists,
  newGuard,
  quarantineEntries,
  treeOf,
} from '../test/guard-test-helpers.js';
import { findGitTemplateDir } from './created-repositories.js';
import type { GuardTarget, PathGuard } from './path-guard.js';

useLeakCheck();

let guardBinary: string;
beforeAll(() => {
  guardBinary = builtGuard();
});

const WHY = 'a new git directory brings its own config and hooks, which git on the host would run';
const ENV = {
  ...process.env,
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 'u',
  GIT_AUTHOR_EMAIL: 'u@example.invalid',
  GIT_COMMITTER_NAME: 'u',
  GIT_COMMITTER_EMAIL: 'u@example.invalid',
  GIT_CEILING_DIRECTORIES: '',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env: ENV, encoding: 'utf8' });

function setUp(options: { templates?: boolean } = {}): {
  ws: string;
  quarantine: string;
  guard: PathGuard;
  target: GuardTarget;
} {
  const ws = tempDir('ux-repo-ws-');
  const quarantine = join(tempDir('ux-repo-q-'), 'quarantine');
  const templates = options.templates === false ? undefined : findGitTemplateDir();
  const guard = newGuard({
    binaryPath: guardBinary,
    quarantineDir: quarantine,
    ...(templates ? { gitTemplateDir: templates } : {}),
  });
  return { ws, quarantine, guard, target: { dir: ws, name: '.git', why: WHY, repository: true } };
}

/** Runs `git status` in `dir` as a person would; returns whether the fsmonitor hook wrote `mark`. */
function statusRuns(dir: string, mark: string): boolean {
  rmSync(mark, { force: true });
  spawnSync('git', ['status'], { cwd: dir, env: ENV, encoding: 'utf8' });
  return existsSync(mark);
}

describe('a repository the command created', () => {
  it('git init, add and commit: left in place, nothing reported, nothing quarantined', async () => {
    const { ws, quarantine, guard, target } = setUp();
    const { notices, onNotice } = collector();
    const watch = await guard.watch([target], onNotice);
    git(ws, 'init', '-q');
    writeFileSync(join(ws, 'README'), 'hi\n');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-qm', 'x');
    const before = readFileSync(join(ws, '.git', 'config'), 'utf8');
    await watch.stop();
    expect(notices).toEqual([]);
    expect(quarantineEntries(quarantine)).toEqual([]);
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe(before);
    expect(git(ws, 'log', '--format=%s')).toBe('x\n');
  });

  it('git clone of a local repository (remote and branch keys) and of one with a submodule: nothing reported', async () => {
    const source = tempDir('ux-repo-src-');
    git(source, 'init', '-q');
    writeFileSync(join(source, 'a'), 'a\n');
    git(source, 'add', '-A');
    git(source, 'commit', '-qm', 'a');
    const superproject = tempDir('ux-repo-super-');
    git(superproject, 'init', '-q');
    git(superproject, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', source, 'sub');
    git(superproject, 'commit', '-qm', 'with a submodule');

    for (const [from, recurse] of [
      [source, false],
      [superproject, true],
    ] as const) {
      const { ws, quarantine, guard, target } = setUp();
      const { notices, onNotice } = collector();
      const watch = await guard.watch([target], onNotice);
      git(
        ws,
        '-c',
        'protocol.file.allow=always',
        'clone',
        '-q',
        ...(recurse ? ['--recurse-submodules'] : []),
        from,
        '.',
      );
      await watch.stop();
      expect(notices).toEqual([]);
      expect(quarantineEntries(quarantine)).toEqual([]);
      expect(git(ws, 'config', 'remote.origin.url')).toBe(`${from}\n`);
      if (recurse) expect(readFileSync(join(ws, 'sub', 'a'), 'utf8')).toBe('a\n');
    }
  });

  it('core.fsmonitor, a planted hook, commondir and info/attributes: one notice, one entry, git config replaced', async () => {
    const { ws, quarantine, guard, target } = setUp();
    const mark = join(tempDir('ux-repo-mark-'), 'PWNED');
    // Control: such a repository runs the fsmonitor on the host's git status.
    const control = tempDir('ux-repo-control-');
    git(control, 'init', '-q');
    git(control, 'config', 'core.fsmonitor', `touch ${mark}; false`);
    expect(statusRuns(control, mark), 'the control repository does not run its fsmonitor').toBe(true);

    const { notices, onNotice } = collector();
    const watch = await guard.watch([target], onNotice);
    git(ws, 'init', '-q');
    git(ws, 'config', 'core.fsmonitor', `touch ${mark}; false`);
    git(ws, 'config', 'alias.st', '!touch /tmp/never');
    writeFileSync(join(ws, '.git', 'hooks', 'pre-commit'), '#!/bin/sh\ntouch /tmp/never\n', { mode: 0o755 });
    writeFileSync(join(ws, '.git', 'commondir'), '../elsewhere\n');
    writeFileSync(join(ws, '.git', 'info', 'attributes'), '* filter=evil\n');
    // A sample git does not ship, and one of git's own changed: both go.
    writeFileSync(join(ws, '.git', 'hooks', 'extra.sample'), 'x');
    writeFileSync(join(ws, '.git', 'hooks', 'pre-push.sample'), '#!/bin/sh\necho changed\n');
    await watch.stop();

    expect(notices).toHaveLength(1);
    const notice = notices[0]!;
    expect(notice.path).toBe(join(ws, '.git'));
    const entry = notice.movedTo ?? '';
    expect(entry.startsWith(`${quarantine}/`)).toBe(true);
    expect(notice.message).toBe(
      `the command created the git repository ${join(ws, '.git')} with config (core.fsmonitor, alias.st), commondir, info/attributes, hooks/extra.sample, hooks/pre-commit, hooks/pre-push.sample: git does not write that itself, and git on the host would read or run it. ux moved it to ${entry}, and wrote a config with only git's own settings in its place. Look at it before putting any of it back.`,
    );
    expect(quarantineEntries(quarantine)).toEqual([entry.slice(quarantine.length + 1)]);
    expect(readFileSync(join(entry, 'config'), 'utf8')).toContain(`\tfsmonitor = "touch ${mark}; false"\n`);
    expect(statSync(join(entry, 'hooks', 'pre-commit')).mode & 0o777).toBe(0o600);
    expect(treeOf(entry)).toEqual(
      [
        'commondir',
        'config',
        'hooks',
        'hooks/extra.sample',
        'hooks/pre-commit',
        'hooks/pre-push.sample',
        'info',
        'info/attributes',
      ].sort(),
    );
    // What is left is git's own: the same repository, its config without the other keys.
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe(
      '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n[alias]\n',
    );
    for (const name of [
      'commondir',
      'info/attributes',
      'hooks/pre-commit',
      'hooks/extra.sample',
      'hooks/pre-push.sample',
    ])
      expect(exists(join(ws, '.git', name)), name).toBe(false);
    expect(exists(join(ws, '.git', 'hooks', 'pre-commit.sample'))).toBe(true);
    expect(statusRuns(ws, mark)).toBe(false);
  });

  it('git-lfs’s own keys and the user’s name and email pass', async () => {
    const { ws, quarantine, guard, target } = setUp();
    const { notices, onNotice } = collector();
    const watch = await guard.watch([target], onNotice);
    git(ws, 'init', '-q');
    git(ws, 'config', 'lfs.repositoryformatversion', '0');
    git(ws, 'config', 'lfs.https://example.com/r.git/info/lfs.access', 'basic');
    git(ws, 'config', 'user.name', 'A Person');
    git(ws, 'config', 'user.email', 'a@example.invalid');
    await watch.stop();
    expect(notices).toEqual([]);
    expect(quarantineEntries(quarantine)).toEqual([]);
  });

  it('a config not in the form git writes is replaced by git’s minimal one', async () => {
    const { ws, quarantine, guard, target } = setUp();
    const { notices, onNotice } = collector();
    const watch = await guard.watch([target], onNotice);
    git(ws, 'init', '-q');
    // Each of these is read by git, but git's own writer never produces it.
    writeFileSync(
      join(ws, '.git', 'config'),
      '[core]\n\trepositoryformatversion = 0\n# a comment\n[include]\n\tpath = /tmp/elsewhere\n',
    );
    await watch.stop();
    expect(notices).toHaveLength(1);
    expect(notices[0]?.message).toContain('config (not in the form git writes)');
    expect(readFileSync(join(ws, '.git', 'config'), 'utf8')).toBe(
      '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n',
    );
    expect(quarantineEntries(quarantine)).toHaveLength(1);
  });

  it('a config that is a symbolic link is taken, and a new one written in its place (the link not followed)', async () => {
    const { ws, guard, target } = setUp();
    const outside = join(tempDir('ux-repo-outside-'), 'config');
    writeFileSync(outside, '[core]\n\tbare = false\n');
    const { notices, onNotice } = collector();
    const watch = await guard.watch([target], onNotice);
    git(ws, 'init', '-q');
    rmSync(join(ws, '.git', 'config'));
    symlinkSync(outside, join(ws, '.git', 'config'));
    await watch.stop();
    expect(notices[0]?.message).toContain('config (a symbolic link)');
    expect(lstatSync(join(ws, '.git', 'config')).isFile()).toBe(true);
    expect(readFileSync(outside, 'utf8')).toBe('[core]\n\tbare = false\n');
  });

  it('without git’s template directory, any *.sample file passes; other hooks do not', async () => {
    const { ws, guard, target } = setUp({ templates: false });
    const { notices, onNotice } = collector();
    const watch = await guard.watch([target], onNotice);
    git(ws, 'init', '-q');
    writeFileSync(join(ws, '.git', 'hooks', 'mine.sample'), 'x');
    writeFileSync(join(ws, '.git', 'hooks', 'post-checkout'), 'x');
    await watch.stop();
    expect(notices).toHaveLength(1);
    expect(notices[0]?.message).toContain(' with hooks/post-checkout: ');
    expect(exists(join(ws, '.git', 'hooks', 'mine.sample'))).toBe(true);
  });

  it('a hooks directory too full to look through is taken whole', async () => {
    const { ws, guard, target } = setUp();
    const { notices, onNotice } = collector();
    const watch = await guard.watch([target], onNotice);
    git(ws, 'init', '-q');
    for (let i = 0; i < 600; i++) writeFileSync(join(ws, '.git', 'hooks', `n${i}.sample`), 'x');
    writeFileSync(join(ws, '.git', 'hooks', 'zz-pre-commit'), 'x');
    await watch.stop();
    expect(notices).toHaveLength(1);
    expect(notices[0]?.message).toContain(' with hooks (too many entries to look at): ');
    expect(exists(join(ws, '.git', 'hooks'))).toBe(false);
  });

  it('a .git that appears as a file is taken away at once, as before', async () => {
    const { ws, guard, target } = setUp();
    const { notices, onNotice } = collector();
    const watch = await guard.watch([target], onNotice);
    writeFileSync(join(ws, '.git'), 'gitdir: /tmp/elsewhere\n');
    await watch.stop();
    expect(exists(join(ws, '.git'))).toBe(false);
    expect(notices).toHaveLength(1);
    expect(notices[0]?.message).toMatch(/so ux moved it to /);
  });

  it('a repository in a place nobody watched is checked when the stop asks for it; a link on the way is not followed', async () => {
    const { ws, guard } = setUp();
    mkdirSync(join(ws, 'vendor'));
    git(join(ws, 'vendor'), 'init', '-q', 'x');
    writeFileSync(join(ws, 'vendor', 'x', '.git', 'hooks', 'post-checkout'), 'x', { mode: 0o755 });
    // Another repository reached only through a symbolic link: the guard refuses to follow it.
    const outside = tempDir('ux-repo-outside-');
    git(outside, 'init', '-q', 'y');
    writeFileSync(join(outside, 'y', '.git', 'hooks', 'post-checkout'), 'keep me');
    symlinkSync(outside, join(ws, 'link'));

    const { notices, onNotice } = collector();
    const watch = await guard.watch([], onNotice);
    await watch.stop({
      repositories: [
        { root: ws, gitDir: 'vendor/x/.git', workTree: join(ws, 'vendor', 'x') },
        { root: ws, gitDir: 'link/y/.git', workTree: join(ws, 'link', 'y') },
      ],
    });
    expect(notices.map((notice) => notice.path)).toEqual([
      join(ws, 'vendor/x/.git'),
      join(ws, 'link/y/.git'),
    ]);
    expect(notices[0]?.message).toContain(' with hooks/post-checkout: ');
    expect(exists(join(ws, 'vendor', 'x', '.git', 'hooks', 'post-checkout'))).toBe(false);
    expect(notices[1]?.message).toMatch(/could not check it/);
    expect(readFileSync(join(outside, 'y', '.git', 'hooks', 'post-checkout'), 'utf8')).toBe('keep me');
  });

  it('a linked worktree the command added passes; a rewritten commondir there does not', async () => {
    const { ws, guard, target } = setUp();
    const { notices, onNotice } = collector();
    const watch = await guard.watch([target], onNotice);
    git(ws, 'init', '-q');
    git(ws, 'commit', '-q', '--allow-empty', '-m', 'x');
    git(ws, 'worktree', 'add', '-q', join(ws, 'wt'));
    git(ws, 'worktree', 'add', '-q', join(ws, 'wt2'));
    writeFileSync(join(ws, '.git', 'worktrees', 'wt2', 'commondir'), '/tmp/elsewhere\n');
    // An old timestamp changes nothing: the check reads what is there.
    utimesSync(join(ws, '.git', 'worktrees', 'wt2', 'commondir'), 1, 1);
    await watch.stop();
    expect(notices).toHaveLength(1);
    expect(notices[0]?.message).toContain('worktrees/wt2/commondir (not the "../.." git writes)');
    expect(readFileSync(join(ws, '.git', 'worktrees', 'wt', 'commondir'), 'utf8')).toBe('../..\n');
  });
});
