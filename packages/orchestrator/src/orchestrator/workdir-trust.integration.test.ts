// Real repositories made with git, real ctime and birth times: which working directories an escalated
// program may run in without reading configuration the sandbox wrote.
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, realpathSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import type { EscalationScope } from './escalation-scope.js';
import { workdirTrust } from './workdir-trust.js';

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

function repository(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '-q');
  git(dir, 'commit', '-q', '--allow-empty', '-m', 'init');
  return dir;
}

/** A workspace (the one writable root) and a session that starts after the set-up, once the clock passed it. */
async function session(setup: (ws: string) => void = () => {}) {
  const ws = realpathSync(tempDir('ux-workdir-'));
  setup(ws);
  const sessionStartMs = Date.now() + 60;
  // Past the start by more than a kernel clock tick: changes made next are stamped after it.
  while (Date.now() <= sessionStartMs + 20) await new Promise((resolve) => setTimeout(resolve, 10));
  const scope = (overrides: Partial<EscalationScope> = {}): EscalationScope => ({
    writableRoots: [ws],
    layoutRoots: [ws],
    tmpRoots: [],
    privateTmp: false,
    sessionStartMs,
    env: {},
    homeDir: join(ws, 'home'),
    ...overrides,
  });
  // The verdict; the directory it pinned is released (and checked to be the one named `cwd`).
  const check = (
    cwd: string,
    argv: string[] = ['git', 'status'],
    overrides: Partial<EscalationScope> = {},
  ) => {
    const { pin, ...verdict } = workdirTrust({
      cwd,
      argv,
      programNames: [argv[0]!],
      scope: scope(overrides),
    });
    if (pin) {
      const stat = statSync(cwd, { bigint: true });
      expect(pin.identity).toEqual({ dev: `${stat.dev}`, ino: `${stat.ino}` });
      pin.release();
    }
    return verdict;
  };
  return { ws, check };
}

describe('workdirTrust: the repository around the working directory', () => {
  it('trusts a repository that predates the session, and gives its canonical path', async () => {
    const { ws, check } = await session((ws) => repository(ws));
    // Ordinary work during the session (the index, objects, refs) changes nothing that decides code.
    writeFileSync(join(ws, 'a.txt'), 'a');
    git(ws, 'add', 'a.txt');
    git(ws, 'commit', '-q', '-m', 'a');
    expect(check(ws)).toEqual({ trusted: true, cwd: ws });
  });

  it('refuses a repository made during the session (git init; git status)', async () => {
    const { ws, check } = await session((ws) => mkdirSync(join(ws, 'old')));
    git(join(ws, 'old'), 'init', '-q');
    expect(check(join(ws, 'old'))).toEqual({
      trusted: false,
      why: `the git directory ${join(ws, 'old', '.git')} was created during this session (git would run what its configuration and hooks name)`,
    });
  });

  it('refuses a working directory made during the session', async () => {
    const { ws, check } = await session();
    mkdirSync(join(ws, 'evil'));
    expect(check(join(ws, 'evil'))).toEqual({
      trusted: false,
      why: `the working directory ${join(ws, 'evil')} was created during this session`,
    });
  });

  it('refuses an old repository whose config changed during the session (core.fsmonitor)', async () => {
    const { ws, check } = await session((ws) => repository(join(ws, 'vendor', 'lib')));
    git(join(ws, 'vendor', 'lib'), 'config', 'core.fsmonitor', 'touch /nonexistent/x');
    expect(check(join(ws, 'vendor', 'lib'))).toEqual({
      trusted: false,
      why: `${join(ws, 'vendor', 'lib', '.git', 'config')} was created or changed during this session (git configuration: names programs git runs (core.fsmonitor, core.pager, aliases, filters))`,
    });
  });

  it('refuses a hook added during the session, and a hook under core.hooksPath changed', async () => {
    const { ws, check } = await session((ws) => {
      repository(ws);
      repository(join(ws, 'husky'));
      mkdirSync(join(ws, 'husky', '.husky'));
      writeFileSync(join(ws, 'husky', '.husky', 'pre-commit'), '#!/bin/sh\n');
      git(join(ws, 'husky'), 'config', 'core.hooksPath', '.husky');
    });
    writeFileSync(join(ws, '.git', 'hooks', 'post-checkout'), '#!/bin/sh\n');
    expect(check(ws)).toMatchObject({
      trusted: false,
      why: expect.stringContaining(join(ws, '.git', 'hooks')),
    });
    appendFileSync(join(ws, 'husky', '.husky', 'pre-commit'), 'touch /nonexistent/x\n');
    expect(check(join(ws, 'husky'))).toEqual({
      trusted: false,
      why: `${join(ws, 'husky', '.husky', 'pre-commit')} was created or changed during this session (a git hook: a program git commands run)`,
    });
  });

  it('refuses a submodule planted during the session through the index of an old repository', async () => {
    const { ws, check } = await session((ws) => repository(ws));
    const sub = repository(join(ws, 'sub'));
    git(sub, 'config', 'core.fsmonitor', 'touch /nonexistent/x');
    git(ws, 'update-index', '--add', '--cacheinfo', `160000,${git(sub, 'rev-parse', 'HEAD')},sub`);
    const result = check(ws);
    expect(result).toEqual({
      trusted: false,
      why: `${join(sub, '.git', 'config')} was created or changed during this session (in submodule sub: git configuration: names programs git runs (core.fsmonitor, core.pager, aliases, filters))`,
    });
  });

  it('refuses a .git pointer file written during the session into an old directory', async () => {
    const { ws, check } = await session((ws) => {
      mkdirSync(join(ws, 'dir'));
      execFileSync('git', ['init', '-q', '--bare', join(ws, 'elsewhere.git')], { env: GIT_ENV });
    });
    writeFileSync(join(ws, 'dir', '.git'), `gitdir: ${join(ws, 'elsewhere.git')}\n`);
    expect(check(join(ws, 'dir'))).toEqual({
      trusted: false,
      why: `${join(ws, 'dir', '.git')} was created or changed during this session (the .git pointer: says where the repository is)`,
    });
  });

  it('ignores what lies outside every writable root', async () => {
    const outside = repository(realpathSync(tempDir('ux-workdir-outside-')));
    const { check } = await session();
    git(outside, 'config', 'core.fsmonitor', 'touch /nonexistent/x');
    expect(check(outside)).toEqual({ trusted: true, cwd: outside });
  });
});

describe('workdirTrust: the configuration files of programs ux knows', () => {
  it('refuses make when a Makefile above the working directory changed; git does not read it', async () => {
    const { ws, check } = await session((ws) => {
      writeFileSync(join(ws, 'Makefile'), 'all:\n\ttrue\n');
      mkdirSync(join(ws, 'src'));
    });
    appendFileSync(join(ws, 'Makefile'), 'evil:\n\ttouch /nonexistent/x\n');
    expect(check(join(ws, 'src'), ['make'])).toEqual({
      trusted: false,
      why: `${join(ws, 'Makefile')} was created or changed during this session (a makefile's recipes are commands make runs)`,
    });
    // git does not read it: only where src lies keeps git in (a directory the sandbox could rename).
    expect(check(join(ws, 'src'), ['git', 'status'])).toEqual({
      trusted: false,
      why: expect.stringMatching(new RegExp(`^the working directory ${join(ws, 'src')} lies inside ${ws}, `)),
    });
    expect(check(ws, ['git', 'status'])).toEqual({ trusted: true, cwd: ws });
  });

  it('checks a directory an option names (make -C dir, npm --prefix=dir)', async () => {
    const { ws, check } = await session((ws) => {
      mkdirSync(join(ws, 'sub'));
      writeFileSync(join(ws, 'sub', 'Makefile'), 'all:\n');
      writeFileSync(join(ws, 'sub', '.npmrc'), '');
    });
    writeFileSync(join(ws, 'sub', 'Makefile'), 'all:\n\ttouch /nonexistent/x\n');
    writeFileSync(join(ws, 'sub', '.npmrc'), 'script-shell=/nonexistent/x\n');
    expect(check(ws, ['make', '-sC', 'sub'])).toMatchObject({
      trusted: false,
      why: expect.stringContaining(join(ws, 'sub', 'Makefile')),
    });
    expect(check(ws, ['npm', '--prefix=sub', 'test'])).toMatchObject({
      trusted: false,
      why: expect.stringContaining(join(ws, 'sub', '.npmrc')),
    });
    expect(check(ws, ['make', 'all'])).toEqual({ trusted: true, cwd: ws });
  });

  it('refuses git when the home directory lies in a writable root and its .gitconfig changed', async () => {
    const { ws, check } = await session((ws) => {
      mkdirSync(join(ws, 'home'));
      writeFileSync(join(ws, 'home', '.gitconfig'), '');
      mkdirSync(join(ws, 'project'));
    });
    writeFileSync(join(ws, 'home', '.gitconfig'), '[core]\n\tfsmonitor = touch /nonexistent/x\n');
    expect(check(join(ws, 'project'))).toMatchObject({
      trusted: false,
      why: expect.stringContaining(
        `${join(ws, 'home', '.gitconfig')} was created or changed during this session`,
      ),
    });
  });
});

describe('workdirTrust: where the directory is', () => {
  it('refuses a directory in the private /tmp (the host has another one there) or one that does not exist', async () => {
    const { ws, check } = await session((ws) => mkdirSync(join(ws, 'tmp')));
    const tmp = join(ws, 'tmp');
    expect(check(tmp, ['git', 'status'], { tmpRoots: [tmp], privateTmp: true, layoutRoots: [] })).toEqual({
      trusted: false,
      why: `the working directory ${tmp} is in the sandbox's private ${tmp}; the host's directory of that name is another one`,
    });
    expect(check(join(ws, 'missing'))).toEqual({
      trusted: false,
      why: `the working directory ${join(ws, 'missing')} does not exist outside the sandbox`,
    });
  });
});
