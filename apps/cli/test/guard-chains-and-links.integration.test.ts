// The path guard's chains and kept links through the shipped `ux exec` with the default sandbox, the
// home directory being the workspace: each attack plants code that the host's next login shell or git
// command runs, and each runs first as a control without the sandbox (`--sandbox danger-full-access`),
// where the host must run it, so no test passes vacuously.
//  - Chains: a name below directories that do not exist yet (`~/.config/git` in a home from /etc/skel)
//    is guarded however the directories on the way come to be: a link put there, a directory renamed
//    off the way and rebuilt, a filled directory renamed into place.
//  - Kept links (stow-style dotfiles): the link, a link on the way, and what a link points to cannot be
//    swapped; a linked `.git` of a workspace neither.
import { spawnSync } from 'node:child_process';
import { cpSync, lstatSync, mkdirSync, readlinkSync, renameSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import {
  applyPatchCommand,
  canariesIn,
  canaryDir,
  hostEnv,
  hostGit,
  initRepo,
  sh,
  uxExec,
  uxHomeAt,
  varTmpDir,
} from './trust-boundary-harness.js';

useLeakCheck();

const LONG = 120_000;

/** A git config that leaves `canary` when the host's git runs its fsmonitor. */
const gitConfig = (canary: string) => `[core]\n\tfsmonitor = "touch ${canary}; false"\n`;

interface Place {
  home: string;
  repo: string;
  layout: ReturnType<typeof uxHomeAt>;
}

/** A home from /etc/skel that is the workspace, `extra` run on it first; a repository beside it. */
function place(extra: (home: string) => void = () => {}): Place {
  const base = varTmpDir('ux-chain-');
  const home = join(base, 'home');
  cpSync('/etc/skel', home, { recursive: true });
  extra(home);
  const layout = uxHomeAt({
    workspace: home,
    uxHome: join(base, 'ux-home'),
    home,
    requirements: join(base, 'requirements.toml'),
  });
  return { home, repo: initRepo(join(base, 'host-repo')), layout };
}

/** What the person does next on the host: a login shell (which runs `ls`) and `git status`. */
function afterwards(at: Place): void {
  spawnSync('bash', ['-l', '-i', '-c', 'ls >/dev/null 2>&1; true'], {
    cwd: at.home,
    env: hostEnv(at.home),
    timeout: 20_000,
    stdio: 'ignore',
  });
  hostGit(at.repo, ['status'], at.home);
}

/**
 * Runs `script(canaries)` without the sandbox (the control: the host must run what it planted, every
 * canary `expected` appears) and then sandboxed (none may); returns the sandboxed run's stdout.
 */
async function attack(
  prepare: (home: string) => void,
  script: (canaries: string) => string,
  expected: string[],
): Promise<{ stdout: string; target: Place }> {
  const controlCanaries = canaryDir();
  const control = place(prepare);
  await uxExec(control.layout, ['--sandbox', 'danger-full-access'], script(controlCanaries));
  afterwards(control);
  expect(canariesIn(controlCanaries), 'control: the host runs what the command planted').toEqual(expected);

  const canaries = canaryDir();
  const target = place(prepare);
  const attempt = await uxExec(target.layout, [], script(canaries));
  afterwards(target);
  expect(canariesIn(canaries), `the host ran what the command planted:\n${attempt.stdout}`).toEqual([]);
  return { stdout: attempt.stdout, target };
}

describe('chains: names below directories that do not exist yet, in a home from /etc/skel', () => {
  it(
    'a link put where ~/.config would be, to a directory the command filled, is taken away',
    async () => {
      const { stdout, target } = await attack(
        () => {},
        (c) =>
          `mkdir -p evil/git && printf '%s' ${sh(gitConfig(`${c}/link`))} > evil/git/config && ln -s "$PWD/evil" .config`,
        ['link'],
      );
      expect(() => lstatSync(join(target.home, '.config'))).toThrow();
      expect(stdout).toContain(
        `the command created ${join(target.home, '.config')} (a link where ux follows the way to`,
      );
    },
    LONG,
  );

  it(
    '~/.config renamed off the way and built again: its git is taken away',
    async () => {
      const { stdout, target } = await attack(
        () => {},
        (c) =>
          `mkdir .config && sleep 0.3 && mv .config old && mkdir -p .config/git && printf '%s' ${sh(gitConfig(`${c}/renamed`))} > .config/git/config; true`,
        ['renamed'],
      );
      expect(stdout).toContain(`the command created ${join(target.home, '.config', 'git')} (`);
      expect(lstatSync(join(target.home, 'old')).isDirectory()).toBe(true);
    },
    LONG,
  );

  it(
    'a directory filled beforehand and renamed into place as ~/.config or ~/.local: what it holds is taken',
    async () => {
      const { stdout, target } = await attack(
        () => {},
        (c) =>
          [
            `mkdir -p stage/git && printf '%s' ${sh(gitConfig(`${c}/moved_in`))} > stage/git/config`,
            'mkdir .config && sleep 0.3 && rmdir .config && mv stage .config',
            `mkdir -p st/bin && printf '#!/bin/sh\\ntouch ${c}/local_bin_ls\\nexec /bin/ls "$@"\\n' > st/bin/ls && chmod +x st/bin/ls && mv st .local`,
            'true',
          ].join('\n'),
        ['local_bin_ls', 'moved_in'],
      );
      // The directories on the way are the command's; only the protected names went.
      expect(stdout).toContain(`the command created ${join(target.home, '.config', 'git')} (`);
      expect(stdout).toContain(`the command created ${join(target.home, '.local', 'bin')} (`);
      expect(lstatSync(join(target.home, '.config')).isDirectory()).toBe(true);
      expect(lstatSync(join(target.home, '.local')).isDirectory()).toBe(true);
    },
    LONG,
  );
});

describe('kept links: stow-style dotfiles', () => {
  const stow = (home: string) => {
    mkdirSync(join(home, 'dotfiles', 'config', 'nvim'), { recursive: true });
    renameSync(join(home, '.bashrc'), join(home, 'dotfiles', 'bashrc'));
    symlinkSync('dotfiles/bashrc', join(home, '.bashrc'));
    symlinkSync('dotfiles/config', join(home, '.config'));
  };

  it(
    '~/.config is a link: moving it away and building ~/.config/git in its place runs nothing',
    async () => {
      const { target, stdout } = await attack(
        stow,
        (c) =>
          `mv .config c2 && mkdir -p .config/git && printf '%s' ${sh(gitConfig(`${c}/swapped_dir_link`))} > .config/git/config; true`,
        ['swapped_dir_link'],
      );
      expect(readlinkSync(join(target.home, '.config'))).toBe('dotfiles/config');
      expect(stdout).toContain(`${join(target.home, '.config')}, a link to dotfiles/config`);
    },
    LONG,
  );

  it(
    '~/.config is a link: ~/.config/git made where it points runs nothing',
    async () => {
      const { stdout, target } = await attack(
        stow,
        (c) =>
          `mkdir -p dotfiles/config/git && printf '%s' ${sh(gitConfig(`${c}/through_link`))} > dotfiles/config/git/config; true`,
        ['through_link'],
      );
      expect(stdout).toContain(`the command created ${join(target.home, 'dotfiles', 'config', 'git')} (`);
    },
    LONG,
  );

  it(
    "the door's apply_patch cannot write ~/.bashrc through the link, nor ~/.config/git/config through ~/.config",
    async () => {
      const patch = (c: string) =>
        applyPatchCommand(
          [
            `*** Update File: .bashrc\n@@\n+touch ${c}/patched_bashrc\n`,
            `*** Add File: .config/git/config\n+[core]\n+\tfsmonitor = "touch ${c}/patched_git; false"\n`,
          ].join(''),
        );
      const { stdout, target } = await attack(stow, patch, ['patched_bashrc', 'patched_git']);
      expect(stdout).toMatch(/is protected \(shell start-up file/);
      expect(() => lstatSync(join(target.home, 'dotfiles', 'config', 'git'))).toThrow();
    },
    LONG,
  );

  it(
    'what ~/.bashrc points to cannot be swapped by renaming its directory',
    async () => {
      const { target } = await attack(
        stow,
        (c) =>
          `mv dotfiles d2 && mkdir dotfiles && printf 'touch ${c}/bashrc_target\\n' > dotfiles/bashrc; true`,
        ['bashrc_target'],
      );
      // Its directory is pinned inside the sandbox: the rename failed (EBUSY), nothing moved.
      expect(() => lstatSync(join(target.home, 'd2'))).toThrow();
    },
    LONG,
  );

  it(
    "a workspace's .git that is a link: a new .git put in its place is taken away and the link made again",
    async () => {
      const controlCanaries = canaryDir();
      const canaries = canaryDir();
      const linked = (canary: string) => {
        const base = varTmpDir('ux-chain-');
        const ws = join(base, 'ws');
        mkdirSync(ws);
        initRepo(join(base, 'real'));
        symlinkSync('../real/.git', join(ws, '.git'));
        const layout = uxHomeAt({
          workspace: ws,
          uxHome: join(base, 'ux-home'),
          home: join(base, 'home'),
          requirements: join(base, 'requirements.toml'),
        });
        return {
          ws,
          layout,
          script: `mv .git old-git && git init -q . 2>/dev/null; git config core.fsmonitor ${sh(`touch ${canary}; false`)} 2>/dev/null; true`,
        };
      };
      const control = linked(`${controlCanaries}/git_link`);
      await uxExec(control.layout, ['--sandbox', 'danger-full-access'], control.script);
      hostGit(control.ws, ['status']);
      expect(canariesIn(controlCanaries)).toEqual(['git_link']);

      const target = linked(`${canaries}/git_link`);
      const attempt = await uxExec(target.layout, [], target.script);
      hostGit(target.ws, ['status']);
      expect(canariesIn(canaries), attempt.stdout).toEqual([]);
      expect(readlinkSync(join(target.ws, '.git'))).toBe('../real/.git');
      expect(attempt.stdout).toMatch(/link to \.\.\/real\/\.git/);
    },
    LONG,
  );
});
