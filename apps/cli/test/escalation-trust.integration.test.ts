// ZshFork escalation never hands what the sandbox wrote to a program that runs outside it (the trust
// boundary for escalated programs): the shipped `ux exec` in ZshFork mode with `prefix_rule(["git","status"], allow)` (what
// `[p]` saves), a real patched zsh, broker and bwrap. Each attack is checked on the host (the file its
// payload would make outside every writable root is not there) and run again as a control where it does
// work (without the sandbox, or with a plain host git in the planted repository), so no test passes
// because the payload was broken.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { useLeakCheck, zshForkPath } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { makeHome, runUx, type UxHome } from './cli-harness.js';

let zsh: string;
beforeAll(() => {
  zsh = zshForkPath();
});
useLeakCheck();

const GIT_STATUS_RULE = 'prefix_rule(pattern=["git", "status"], decision="allow")\n';

/**
 * A UX_HOME with the zsh fork on and the allow rule; its workspace is a git repository made before the
 * session (with a commit); `out` is where payloads write: under /var/tmp, outside every writable root
 * (the home and workspace lie in /tmp, which the sandbox writes); `tmp` is the session's $TMPDIR.
 */
function session(
  options: { ownFsmonitor?: boolean; sharedTmp?: boolean } = {},
): UxHome & { out: string; tmp: string } {
  const home = makeHome({
    config: [
      '[features]\nshell_zsh_fork = true\nunified_exec_zsh_fork = true\n',
      `[zsh_fork]\nzsh_path = "${zsh}"\n`,
      // The host's $TMPDIR writable by the sandbox, as without a private /tmp (the set-up).
      options.sharedTmp ? '[sandbox_workspace_write]\nprivate_tmp = false\n' : '',
    ].join(''),
  });
  mkdirSync(join(home.home, 'rules'));
  writeFileSync(join(home.home, 'rules', 'test.rules'), GIT_STATUS_RULE);
  const base = realpathSync(mkdtempSync('/var/tmp/ux-escalation-trust-'));
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  const out = join(base, 'out');
  const tmp = join(base, 'tmp');
  mkdirSync(out);
  mkdirSync(tmp);
  hostGit(home, home.workspace, 'init', '-q');
  hostGit(home, home.workspace, 'commit', '-q', '--allow-empty', '-m', 'init');
  // The person's own configuration, from before the session: an escalated git status runs it on the host.
  if (options.ownFsmonitor) hostGit(home, home.workspace, 'config', 'core.fsmonitor', `touch ${out}/own #`);
  return { ...home, env: { ...home.env, TMPDIR: tmp }, out, tmp };
}

/** git on the host, as the person would run it after the session, with the test's HOME. */
function hostGit(home: UxHome, cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home.home, GIT_CONFIG_NOSYSTEM: '1' },
    encoding: 'utf8',
  });
}

/** Sandbox lines of a receipt. */
const notices = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('Sandbox: '));

describe('escalation in ZshFork mode with an allow rule for git status', () => {
  it('still runs git status of the workspace’s own repository outside the sandbox (its own fsmonitor runs on the host)', async () => {
    const home = session({ ownFsmonitor: true });
    // `echo` has no rule, so the command itself is sandboxed and git status escalates from it.
    const result = await runUx(['exec', '--', 'echo start; git status'], home);
    expect(result.status).toBe(0);
    expect(notices(result.stdout)).toEqual([
      'Sandbox: ran `git status` OUTSIDE the sandbox, as policy allows',
    ]);
    expect(result.stdout).toContain('nothing to commit');
    expect(existsSync(join(home.out, 'own'))).toBe(true);
  });

  it('git init && git status works, inside the sandbox: a planted core.fsmonitor does not run on the host', async () => {
    const home = session();
    const script = `git init -q evil && git -C evil config core.fsmonitor "touch ${home.out}/fsmonitor #" && cd evil && git status`;
    const result = await runUx(['exec', '--', script], home);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('No commits yet');
    // Two protections act: the escalation stays in, and when the command has ended the path guard checks
    // the new repository and quarantines the config git did not write itself.
    expect(notices(result.stdout)).toEqual([
      `Sandbox: ran \`git status\` inside the sandbox, not outside as policy allows: the working directory ${join(home.workspace, 'evil')} was created during this session`,
      expect.stringMatching(
        /^Sandbox: the command created the git repository .*\/evil\/\.git with config \(core\.fsmonitor\)/,
      ),
    ]);
    expect(existsSync(join(home.out, 'fsmonitor'))).toBe(false);
    hostGit(home, join(home.workspace, 'evil'), 'status');
    expect(existsSync(join(home.out, 'fsmonitor'))).toBe(false);
    // Control: the payload is live when planted; a plain git status on the host runs it.
    hostGit(home, join(home.workspace, 'evil'), 'config', 'core.fsmonitor', `touch ${home.out}/fsmonitor #`);
    hostGit(home, join(home.workspace, 'evil'), 'status');
    expect(existsSync(join(home.out, 'fsmonitor'))).toBe(true);
  });

  it('a submodule planted in the index of the workspace’s repository keeps git status inside', async () => {
    const home = session();
    const script = [
      'git init -q sub && git -C sub -c user.name=t -c user.email=t@e commit -q --allow-empty -m s',
      `git -C sub config core.fsmonitor "touch ${home.out}/submodule #"`,
      'git update-index --add --cacheinfo "160000,$(git -C sub rev-parse HEAD),sub"',
      'git status --short',
    ].join(' && ');
    const result = await runUx(['exec', '--', script], home);
    expect(result.status).toBe(0);
    expect(notices(result.stdout)).toEqual([
      expect.stringMatching(
        /^Sandbox: ran `git status --short` inside the sandbox, not outside as policy allows: .*\/sub\/\.git\/config was created or changed during this session \(in submodule sub: git configuration/,
      ),
      expect.stringMatching(
        /^Sandbox: the command created the git repository .*\/sub\/\.git with config \(core\.fsmonitor\)/,
      ),
    ]);
    expect(existsSync(join(home.out, 'submodule'))).toBe(false);
    hostGit(home, home.workspace, 'status');
    expect(existsSync(join(home.out, 'submodule'))).toBe(false);
    // Control: with the payload planted again, the person's own git status in the workspace runs it.
    hostGit(home, join(home.workspace, 'sub'), 'config', 'core.fsmonitor', `touch ${home.out}/submodule #`);
    hostGit(home, home.workspace, 'status');
    expect(existsSync(join(home.out, 'submodule'))).toBe(true);
  });

  it('runs git status outside with the session’s HOME, XDG_CONFIG_HOME and git directory, not the shell’s', async () => {
    const home = session();
    const script = [
      `mkdir -p fh x/git && printf '[core]\\n\\tfsmonitor = touch ${home.out}/home #\\n' > fh/.gitconfig`,
      `printf '[core]\\n\\tfsmonitor = touch ${home.out}/xdg #\\n' > x/git/config`,
      'git init -q --bare e.git && git --git-dir=e.git config core.bare false',
      `git --git-dir=e.git config core.fsmonitor "touch ${home.out}/gitdir #"`,
      'HOME=$PWD/fh git status --short',
      'XDG_CONFIG_HOME=$PWD/x git status --short',
      'GIT_DIR=$PWD/e.git GIT_WORK_TREE=$PWD git status --short',
    ].join('; ');
    const result = await runUx(['exec', '--', script], home);
    expect(result.status).toBe(0);
    expect(notices(result.stdout)).toEqual([
      'Sandbox: ran `git status --short` OUTSIDE the sandbox, as policy allows (without HOME)',
      'Sandbox: ran `git status --short` OUTSIDE the sandbox, as policy allows (without XDG_CONFIG_HOME)',
      'Sandbox: ran `git status --short` OUTSIDE the sandbox, as policy allows (without GIT_DIR, GIT_WORK_TREE)',
    ]);
    for (const payload of ['home', 'xdg', 'gitdir']) expect(existsSync(join(home.out, payload))).toBe(false);

    // Control: the same script without the sandbox, where git gets the shell's variables.
    const control = await runUx(['exec', '--sandbox', 'danger-full-access', '--', script], {
      ...home,
      workspace: resetWorkspace(home),
    });
    expect(control.status).toBe(0);
    for (const payload of ['home', 'xdg', 'gitdir']) expect(existsSync(join(home.out, payload))).toBe(true);
  });

  it('never runs a git the command wrote outside, after leaving the workspace or from $TMPDIR', async () => {
    const home = session({ sharedTmp: true });
    // The fake writes `fake-<its first argument>`; the attack calls it as `git status` (what the rule allows).
    const script = (left: string, fromTmp: string) =>
      [
        `mkdir -p bin && printf '#!/bin/sh\\ntouch ${home.out}/fake-"$1"\\n' > bin/git && chmod +x bin/git`,
        `W=$PWD; (cd /usr && "$W/bin/git" ${left})`,
        `cp bin/git "$TMPDIR/git" && "$TMPDIR/git" ${fromTmp}`,
        'echo "TMPDIR=$TMPDIR"',
      ].join('; ');
    const attack = script('status', 'status');
    const result = await runUx(['exec', '--', attack], home);
    expect(result.status).toBe(0);
    expect(result.stdout).toContain(`TMPDIR=${home.tmp}\n`);
    expect(notices(result.stdout)).toEqual([
      `Sandbox: ran \`${join(home.workspace, 'bin', 'git')} status\` inside the sandbox, not outside as policy allows: ${join(home.workspace, 'bin', 'git')} lies in ${home.workspace}, which the sandbox can write`,
      `Sandbox: ran \`${join(home.tmp, 'git')} status\` inside the sandbox, not outside as policy allows: ${join(home.tmp, 'git')} lies in ${home.tmp}, a temporary directory the sandbox can write`,
    ]);
    expect(existsSync(join(home.out, 'fake-status'))).toBe(false);

    // Control: without the sandbox both fakes run and write their file.
    const control = await runUx(
      ['exec', '--sandbox', 'danger-full-access', '--', script('left', 'tmpdir')],
      home,
    );
    expect(control.status).toBe(0);
    expect(existsSync(join(home.out, 'fake-left'))).toBe(true);
    expect(existsSync(join(home.out, 'fake-tmpdir'))).toBe(true);
  });

  it('quotes the command’s control characters visibly in the notice', async () => {
    const home = session();
    const result = await runUx(
      ['exec', '--', `git init -q evil && cd evil && git status $'\\e[2J\\rforged'`],
      home,
    );
    const [line] = notices(result.stdout);
    expect(line).toContain('ran `git status \\e[2J\\rforged` inside the sandbox');
    expect(line).not.toMatch(/[\x1b\r]/);
  });
});

/** A fresh workspace repository beside the first (the control must not see the first run's files). */
function resetWorkspace(home: UxHome): string {
  const workspace = join(home.home, 'control-workspace');
  mkdirSync(workspace);
  hostGit(home, workspace, 'init', '-q');
  hostGit(home, workspace, 'commit', '-q', '--allow-empty', '-m', 'init');
  return workspace;
}
