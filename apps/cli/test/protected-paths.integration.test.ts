// Protected paths through `ux exec` with the default sandbox: nothing ux makes is ever visible (in the
// workspace, in a writable /tmp, during a command, after it, after kill -KILL of ux), and git's
// configuration surface stays out of a command's reach while `git add` and `git commit` keep working.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { descendantPids, waitUntilDead } from '@ux/protocol-testing';
import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, makeHome, runUx, type UxHome } from './cli-harness.js';

useLeakCheck();

const AGENT_NAMES = ['.ux', '.codex', '.agents'];
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=u', '-c', 'user.email=u@example.invalid', ...args], {
    cwd,
    encoding: 'utf8',
  });
/** A host-side `git` run as a user would, reporting what it printed and how it ended. */
const hostGit = (cwd: string, ...args: string[]) =>
  spawnSync('git', args, { cwd, encoding: 'utf8', env: { ...process.env, GIT_CEILING_DIRECTORIES: '' } });

function repo(home: UxHome): string {
  git(home.workspace, 'init', '-q');
  writeFileSync(join(home.workspace, 'README'), 'hello\n');
  git(home.workspace, 'add', 'README');
  git(home.workspace, 'commit', '-q', '-m', 'first');
  return home.workspace;
}

/** The output of the last receipt `ux exec` printed (it ends the receipt with a newline of its own). */
const output = (stdout: string) => stdout.slice(stdout.lastIndexOf('Output:\n') + 8).replace(/\n$/, '');

describe('no litter', () => {
  it('in a fresh repository: sandboxed git status, ls -A and git add + commit see and commit nothing ux made', async () => {
    const home = makeHome();
    const ws = home.workspace;
    git(ws, 'init', '-q');
    writeFileSync(join(ws, 'README'), 'hello\n');
    const look = await runUx(['exec', '--', 'git status --porcelain --ignored; echo ---; ls -A'], home);
    expect(look.status).toBe(0);
    expect(output(look.stdout)).toBe('?? README\n---\n.git\nREADME\n');
    const commit = await runUx(
      [
        'exec',
        '--',
        'git add -A && git -c user.name=u -c user.email=u@x commit -qm first && git show --name-only --format= HEAD',
      ],
      home,
    );
    expect(commit.status).toBe(0);
    expect(output(commit.stdout)).toBe('README\n');
    expect(hostGit(ws, 'status', '--porcelain', '--ignored').stdout).toBe('');
    expect(readdirSync(ws).sort()).toEqual(['.git', 'README']);
  });

  it('under a writable /tmp: nothing appears in the workspace or /tmp during a command, after it, or after kill -KILL of ux', async () => {
    const home = makeHome();
    const base = mkdtempSync(join(tmpdir(), 'ux-litter-'));
    onTestFinished(() => rmSync(base, { recursive: true, force: true }));
    const project = join(base, 'project');
    const other = join(base, 'other');
    mkdirSync(project);
    mkdirSync(other);
    const tmpBefore = readdirSync(tmpdir()).filter((name) => AGENT_NAMES.includes(name) || name === '.git');

    const look = await runUx(
      ['exec', '--cwd', project, '--', 'git status --porcelain --ignored; ls -A'],
      home,
    );
    expect(look.stdout).toMatch(/fatal: not a git repository/);
    expect(output(look.stdout)).not.toMatch(/^\.(git|ux|codex|agents)$/m);

    // A long sandboxed command; while it runs, the host looks around.
    const ux = spawn(
      process.execPath,
      [BIN, 'exec', '--yield-ms', '300', '--cwd', project, '--', 'echo READY; sleep 60'],
      {
        cwd: project,
        env: home.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    onTestFinished(() => {
      ux.kill('SIGKILL');
    });
    let printed = '';
    ux.stdout.on('data', (chunk) => {
      printed += chunk;
    });
    for (let waited = 0; !printed.includes('READY') && waited < 15_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(printed).toContain('READY');
    const helpers = descendantPids(ux.pid!);
    const guardDir = privateDirOfGuard(helpers);
    expect(guardDir, 'the path guard of this ux').toBeDefined();
    expect(existsSync(guardDir!)).toBe(true);

    const lookAround = () => {
      const status = hostGit(other, 'status');
      expect(status.stderr).toMatch(/not a git repository/);
      expect(status.stderr).not.toMatch(/invalid gitfile/);
      expect(readdirSync(project)).toEqual([]);
      expect(readdirSync(tmpdir()).filter((name) => AGENT_NAMES.includes(name) || name === '.git')).toEqual(
        tmpBefore,
      );
    };
    lookAround();

    ux.kill('SIGKILL');
    await new Promise((resolve) => ux.on('close', resolve));
    for (const pid of helpers) expect(await waitUntilDead(pid, 5_000), `pid ${pid} outlived ux`).toBe(true);
    lookAround();
    // ux's own private directory went with it, though ux had no chance to remove it.
    expect(existsSync(guardDir!)).toBe(false);
  });
});

/** The `--remove-on-exit` directory of the path guard among `pids` (the private files of a ux). */
function privateDirOfGuard(pids: number[]): string | undefined {
  for (const pid of pids) {
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      const at = argv.indexOf('--remove-on-exit');
      if (argv[0]?.endsWith('ux-path-guard') && at > 0) return argv[at + 1];
    } catch {
      // Gone.
    }
  }
  return undefined;
}

interface Attack {
  name: string;
  /** Host-side set-up of the repository before the command. */
  prepare(ws: string, home: UxHome): void;
  /** What the sandboxed command runs; MARK is replaced by the marker's path. */
  script: string;
  /** Where the host's `git status` runs afterwards. */
  statusIn(ws: string, home: UxHome): string;
}

const EVIL_REPO = 'git init -q evil && git -C evil config core.fsmonitor "touch MARK; false"';
const ATTACKS: Attack[] = [
  {
    name: 'a new .git/commondir pointing at a repository it controls',
    prepare: () => {},
    script: `${EVIL_REPO} && echo "$PWD/evil/.git" > .git/commondir`,
    statusIn: (ws) => ws,
  },
  {
    name: 'a new .git/config.worktree (with extensions.worktreeConfig on)',
    prepare: (ws) => {
      git(ws, 'config', 'core.repositoryformatversion', '1');
      git(ws, 'config', 'extensions.worktreeConfig', 'true');
    },
    script: `printf '[core]\\n\\tfsmonitor = "touch MARK; false"\\n' > .git/config.worktree`,
    statusIn: (ws) => ws,
  },
  {
    name: 'a new hooks/ where the repository has none',
    prepare: (ws) => rmSync(join(ws, '.git', 'hooks'), { recursive: true, force: true }),
    script:
      "mkdir .git/hooks && printf '#!/bin/sh\\ntouch MARK\\n' > .git/hooks/post-index-change && chmod +x .git/hooks/post-index-change",
    statusIn: (ws) => {
      // A changed stat makes git status refresh (and write) the index, which runs post-index-change.
      execFileSync('touch', ['-d', '2001-01-01', join(ws, 'README')]);
      return ws;
    },
  },
  {
    name: "a linked worktree's worktrees/x/commondir rewritten",
    prepare: (ws, home) => git(ws, 'worktree', 'add', '-q', join(home.home, 'wt')),
    script: `${EVIL_REPO} && echo "$PWD/evil/.git" > .git/worktrees/wt/commondir`,
    statusIn: (_, home) => join(home.home, 'wt'),
  },
  {
    name: 'worktrees/ moved aside and rebuilt with another commondir',
    prepare: (ws, home) => git(ws, 'worktree', 'add', '-q', join(home.home, 'wt')),
    script: `${EVIL_REPO} && mv .git/worktrees .git/worktrees-old && mkdir -p .git/worktrees/wt && cp -r .git/worktrees-old/wt/. .git/worktrees/wt/ && echo "$PWD/evil/.git" > .git/worktrees/wt/commondir`,
    statusIn: (_, home) => join(home.home, 'wt'),
  },
];

describe('git configuration stays out of reach', () => {
  it.each(ATTACKS)(
    '$name: the host git status afterwards runs nothing; git add + commit still work',
    async (attack) => {
      // Control: without the sandbox the attack works, so this test can fail.
      const control = makeHome();
      repo(control);
      attack.prepare(control.workspace, control);
      const controlMark = join(control.home, 'MARK');
      const unsandboxed = await runUx(
        [
          'exec',
          '--sandbox',
          'danger-full-access',
          '--approval',
          'never',
          '--',
          attack.script.replaceAll('MARK', controlMark),
        ],
        control,
      );
      expect(unsandboxed.status, unsandboxed.stdout).toBe(0);
      hostGit(attack.statusIn(control.workspace, control), 'status');
      expect(existsSync(controlMark), 'the attack does not work even unsandboxed').toBe(true);

      const home = makeHome();
      const ws = repo(home);
      attack.prepare(ws, home);
      const mark = join(home.home, 'MARK');
      const attempt = await runUx(
        ['exec', '--approval', 'never', '--', `${attack.script.replaceAll('MARK', mark)}; sleep 0.2`],
        home,
      );
      hostGit(attack.statusIn(ws, home), 'status');
      expect(existsSync(mark), `the host's git ran the command's code:\n${attempt.stdout}`).toBe(false);

      const change = await runUx(
        [
          'exec',
          '--',
          'echo more >> README && git add README && git -c user.name=u -c user.email=u@x commit -qm change && git log --format=%s -1',
        ],
        home,
      );
      expect(change.status, change.stdout).toBe(0);
      expect(output(change.stdout)).toBe('change\n');
      expect(git(ws, 'log', '--format=%s', '-1')).toBe('change\n');
    },
  );

  it('a created .git/commondir is taken away at once, reported in the receipt and kept in the quarantine', async () => {
    const home = makeHome();
    const ws = repo(home);
    const result = await runUx(
      ['exec', '--approval', 'never', '--', 'echo ../x > .git/commondir; sleep 0.2; cat .git/commondir'],
      home,
    );
    expect(output(result.stdout)).toMatch(/No such file or directory/);
    expect(result.stdout).toMatch(
      /^Sandbox: the command created .*\/\.git\/commondir \(.*\); a sandboxed command may not create it, so ux moved it to (.*)\. /m,
    );
    const movedTo = /so ux moved it to (\S+)\. /.exec(result.stdout)![1]!;
    expect(movedTo.startsWith(join(home.home, 'quarantine'))).toBe(true);
    expect(readFileSync(movedTo, 'utf8')).toBe('../x\n');
    expect(existsSync(join(ws, '.git', 'commondir'))).toBe(false);
  });
});
