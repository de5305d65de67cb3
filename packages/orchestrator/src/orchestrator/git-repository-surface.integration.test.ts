import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import {
  gitConfigurationSurface,
  gitlinksOfIndex,
  parseGitConfig,
  repositoriesAround,
} from './git-repository-surface.js';

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8' }).trim();
}

/** A repository with one commit. */
function repository(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q');
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'init');
  return dir;
}

/** Adds `path` to the index of `repo` as a submodule (gitlink) of `sub`'s HEAD, as a command could. */
function addGitlink(repo: string, path: string, sub: string): void {
  git(repo, 'update-index', '--add', '--cacheinfo', `160000,${git(sub, 'rev-parse', 'HEAD')},${path}`);
}

describe('parseGitConfig', () => {
  it('reads sections, subsections, quoted values, comments and continued lines', () => {
    const text = [
      '[core]',
      '\tfsmonitor = "./watch \\"x\\"" ; comment',
      '  hooksPath = .husky/_',
      '[includeIf "gitdir:~/work/"]',
      '\tpath = ../shared.inc # comment',
      '[alias] st = status',
      '[filter "lfs"]',
      '\tclean = git-lfs clean \\',
      '  -- %f',
      '\tbare',
    ].join('\n');
    expect(parseGitConfig(text)).toEqual([
      { section: 'core', key: 'fsmonitor', value: './watch "x"' },
      { section: 'core', key: 'hookspath', value: '.husky/_' },
      { section: 'includeif gitdir:~/work/', key: 'path', value: '../shared.inc' },
      { section: 'alias', key: 'st', value: 'status' },
      { section: 'filter lfs', key: 'clean', value: 'git-lfs clean   -- %f' },
      { section: 'filter lfs', key: 'bare', value: 'true' },
    ]);
  });
});

describe('gitlinksOfIndex', () => {
  it('lists the submodules of an index in versions 2, 3 and 4', () => {
    const repo = repository(join(tempDir('ux-surface-'), 'repo'));
    const sub = repository(join(tempDir('ux-surface-'), 'sub'));
    writeFileSync(join(repo, 'a.txt'), 'a');
    git(repo, 'add', 'a.txt');
    addGitlink(repo, 'libs/one', sub);
    addGitlink(repo, 'libs/two', sub);
    const index = join(repo, '.git', 'index');
    expect(gitlinksOfIndex(index)).toEqual(['libs/one', 'libs/two']);
    // Version 3: an entry with extended flags (skip-worktree) on the way.
    git(repo, 'update-index', '--skip-worktree', 'a.txt');
    expect(gitlinksOfIndex(index)).toEqual(['libs/one', 'libs/two']);
    git(repo, 'update-index', '--index-version', '4');
    expect(gitlinksOfIndex(index)).toEqual(['libs/one', 'libs/two']);
  });

  it('gives nothing for a missing or foreign file', () => {
    const dir = tempDir('ux-surface-');
    writeFileSync(join(dir, 'index'), 'not an index at all');
    expect(gitlinksOfIndex(join(dir, 'index'))).toEqual([]);
    expect(gitlinksOfIndex(join(dir, 'missing'))).toEqual([]);
  });
});

describe('repositoriesAround', () => {
  it('finds the .git directory above the working directory, and an outer repository too', () => {
    const outer = repository(join(tempDir('ux-surface-'), 'outer'));
    const inner = repository(join(outer, 'vendor', 'inner'));
    mkdirSync(join(inner, 'src'));
    const found = repositoriesAround(join(inner, 'src'));
    expect(found.map((repo) => repo.gitDir)).toEqual([join(inner, '.git'), join(outer, '.git')]);
    expect(found[0]).toEqual({
      dotGit: join(inner, '.git'),
      workTree: inner,
      gitDir: join(inner, '.git'),
      commonDir: join(inner, '.git'),
    });
  });

  it('follows a linked worktree’s .git file and commondir', () => {
    const main = repository(join(tempDir('ux-surface-'), 'main'));
    const linked = join(tempDir('ux-surface-'), 'linked');
    git(main, 'worktree', 'add', '-q', linked);
    const [found] = repositoriesAround(linked);
    expect(found).toEqual({
      dotGit: join(linked, '.git'),
      workTree: linked,
      gitDir: join(main, '.git', 'worktrees', 'linked'),
      commonDir: join(main, '.git'),
    });
  });

  it('takes a bare repository for one when started inside it, and GIT_DIR first', () => {
    const bare = join(tempDir('ux-surface-'), 'e.git');
    execFileSync('git', ['init', '-q', '--bare', bare], { env: GIT_ENV });
    expect(repositoriesAround(bare)[0]).toEqual({ gitDir: bare, commonDir: bare });
    const elsewhere = tempDir('ux-surface-');
    expect(repositoriesAround(elsewhere, bare)[0]).toEqual({ gitDir: bare, commonDir: bare });
  });
});

describe('gitConfigurationSurface', () => {
  it('lists config, hooks, what hooksPath and include name, programs named in values, and submodules', () => {
    const repo = repository(join(tempDir('ux-surface-'), 'repo'));
    mkdirSync(join(repo, '.husky'));
    writeFileSync(join(repo, '.husky', 'pre-commit'), '#!/bin/sh\n');
    mkdirSync(join(repo, 'scripts'));
    writeFileSync(join(repo, 'scripts', 'watch'), '#!/bin/sh\n');
    writeFileSync(join(repo, 'shared.inc'), '[core]\n\tpager = ./scripts/watch\n');
    git(repo, 'config', 'core.hooksPath', '.husky');
    git(repo, 'config', 'core.fsmonitor', 'scripts/watch --flag');
    git(repo, 'config', 'include.path', '../shared.inc');
    const sub = repository(join(repo, 'libs', 'sub'));
    addGitlink(repo, 'libs/sub', sub);

    const [found] = repositoriesAround(repo);
    const paths = gitConfigurationSurface(found!).map((entry) => entry.path);
    const gitDir = join(repo, '.git');
    expect(paths).toEqual(
      expect.arrayContaining([
        join(gitDir, 'config'),
        join(gitDir, 'config.worktree'),
        join(gitDir, 'commondir'),
        join(gitDir, 'hooks'),
        join(gitDir, 'hooks', 'pre-commit.sample'),
        join(repo, '.husky'),
        join(repo, '.husky', 'pre-commit'),
        join(repo, 'shared.inc'),
        join(repo, 'scripts', 'watch'),
        join(sub, '.git', 'config'),
        join(sub, '.git', 'hooks'),
      ]),
    );
    const why = (path: string) => gitConfigurationSurface(found!).find((entry) => entry.path === path)?.why;
    expect(why(join(repo, 'scripts', 'watch'))).toBe('a program git configuration names (core.fsmonitor)');
    expect(why(join(sub, '.git', 'config'))).toMatch(/^in submodule libs\/sub: git configuration/);
  });

  it('lists the .git pointer file of a linked worktree', () => {
    const main = repository(join(tempDir('ux-surface-'), 'main'));
    const linked = join(tempDir('ux-surface-'), 'linked');
    git(main, 'worktree', 'add', '-q', linked);
    const [found] = repositoriesAround(linked);
    const paths = gitConfigurationSurface(found!).map((entry) => entry.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        join(linked, '.git'),
        join(main, '.git', 'worktrees', 'linked', 'config.worktree'),
        join(main, '.git', 'config'),
        join(main, '.git', 'hooks'),
      ]),
    );
  });
});
