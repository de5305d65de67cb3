// The working-directory race of ZshFork escalation (docs/zsh-fork.md, "Escalation and the sandbox's
// files"), through the shipped `ux exec` in ZshFork mode with `prefix_rule(["git","status"], allow)`, a
// real patched zsh, broker and bwrap. A background loop of the sandboxed command keeps exchanging the
// working directory's path between a clean directory of the workspace's repository (made before the
// session) and a repository it planted (`core.fsmonitor` writing a file under /var/tmp, outside every
// writable root), while the script runs `git status` there many times: the payload never runs on the
// host. Two controls run against the same live loop, on the host: a check of the path followed by a
// change into it by path lands in the planted repository, and so does a git started in exactly the
// directory that was checked (it looks its repository up by name): the attack works, and pinning the
// directory alone would not stop it.
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { useLeakCheck, zshForkPath } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { makeHome, runUx, type UxHome } from './cli-harness.js';

let zsh: string;
beforeAll(() => {
  zsh = zshForkPath();
});
useLeakCheck();

/** Most host git runs a control makes before it gives up (it stops at its first success). */
const CONTROL_RUNS = 5000;
/** `git status` runs of the script in the swapped directory. */
const RUNS = 300;

/**
 * Exchanges `box` and `evil` (renameat2 RENAME_EXCHANGE: the path always names one of them) in the
 * current directory until `stop` appears there (or two minutes pass, so a failed test cannot leave it).
 */
const SWAPPER = `import ctypes, os, sys, time
libc = ctypes.CDLL(None, use_errno=True)
end = time.monotonic() + 120
swaps = 0
while not os.path.exists('stop') and time.monotonic() < end:
    for _ in range(200):
        if libc.renameat2(-100, b'box', -100, b'evil', 2) != 0:
            sys.exit('renameat2: errno %d' % ctypes.get_errno())
        swaps += 1
print('swaps', swaps)
`;

interface RaceSession extends UxHome {
  base: string;
  out: string;
}

function raceSession(): RaceSession {
  const home = makeHome({
    config: [
      '[features]\nshell_zsh_fork = true\nunified_exec_zsh_fork = true\n',
      `[zsh_fork]\nzsh_path = "${zsh}"\n`,
    ].join(''),
  });
  mkdirSync(join(home.home, 'rules'));
  writeFileSync(
    join(home.home, 'rules', 'test.rules'),
    'prefix_rule(pattern=["git", "status"], decision="allow")\n',
  );
  // Under /var/tmp: outside /tmp (private to the sandbox) and outside every writable root but the
  // workspace; `out` is where the payload writes, which no sandbox of the session can.
  const base = realpathSync(mkdtempSync('/var/tmp/ux-cwd-race-'));
  onTestFinished(() => rmSync(base, { recursive: true, force: true }));
  const workspace = join(base, 'ws');
  const out = join(base, 'out');
  mkdirSync(workspace);
  mkdirSync(out);
  hostGit(home, workspace, 'init', '-q');
  mkdirSync(join(workspace, 'box'));
  writeFileSync(join(workspace, 'box', 'notes.txt'), 'clean\n');
  hostGit(home, workspace, 'add', 'box/notes.txt');
  hostGit(home, workspace, 'commit', '-q', '-m', 'init');
  writeFileSync(join(base, 'swap.py'), SWAPPER);
  return { ...home, workspace, base, out };
}

function hostGit(home: UxHome, cwd: string, ...args: string[]): void {
  const result = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home.home, GIT_CONFIG_NOSYSTEM: '1' },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr}`);
}

/** Polls until `path` exists (the script says it is ready); a missing file fails after `ms`. */
async function waitForFile(path: string, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!existsSync(path)) {
    if (Date.now() > deadline) throw new Error(`${path} never appeared`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Calls `attempt` until `canary` exists or it ran git `CONTROL_RUNS` times; returns how many it ran.
 * An attempt that finds the other directory at the path waits a moment instead of spinning: a busy
 * loop would keep the sandboxed swapper off the CPU, and the path would stop changing.
 */
async function untilLanded(canary: string, attempt: () => boolean): Promise<number> {
  let runs = 0;
  while (!existsSync(canary) && runs < CONTROL_RUNS) {
    if (attempt()) runs += 1;
    else await new Promise((resolve) => setTimeout(resolve, 1));
  }
  return runs;
}

const notices = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('Sandbox: '));

describe('the working directory swapped under an allowed git status (ZshFork)', () => {
  it('never runs the planted repository’s payload on the host; the same swap defeats a check by path', async () => {
    const home = raceSession();
    const { workspace, out, base } = home;
    const box = join(workspace, 'box');
    const clean = statSync(box, { bigint: true });
    // The planted payload writes out/$CANARY: the controls name theirs, a git escalated by ux has none.
    const script = [
      `mkdir evil && git -C evil init -q && git -C evil config core.fsmonitor 'touch ${out}/\${CANARY:-escalated} #'`,
      `/usr/bin/python3 ${join(base, 'swap.py')} &`,
      'W=$PWD',
      `for i in $(seq 1 ${RUNS}); do (cd "$W/box" 2>/dev/null && git status --short >/dev/null 2>&1); done`,
      // At the workspace's root (a writable root, which the sandbox cannot rename) it still escalates.
      'git status --short >/dev/null && git status --short >/dev/null',
      // The loop goes on for the controls on the host.
      'touch ready',
      'while [ ! -e stop ] && [ -d "$W" ]; do sleep 0.1; done',
      'wait',
    ].join('\n');
    const run = runUx(['exec', '--', script], home);
    // Whatever fails below, the loop and the command end before the workspace goes.
    onTestFinished(async () => {
      if (existsSync(workspace)) writeFileSync(join(workspace, 'stop'), '');
      await run;
    });
    await waitForFile(join(workspace, 'ready'));
    const hostEnv = (canary: string) => ({
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home.home,
      CANARY: canary,
    });
    // Control 1, the old flaw: the path names the clean directory when checked, then a git started
    // there by path runs the planted payload.
    const byPath = await untilLanded(join(out, 'control-by-path'), () => {
      if (statSync(box, { bigint: true, throwIfNoEntry: false })?.ino !== clean.ino) return false;
      spawnSync('git', ['status', '--short'], { cwd: box, env: hostEnv('control-by-path'), stdio: 'ignore' });
      return true;
    });
    // Control 2, why pinning the directory alone is not enough: a git started in exactly the directory
    // that was opened and checked (entered through its descriptor) finds its repository by the
    // directory's name, which the loop swaps under it.
    const pinned = await untilLanded(join(out, 'control-pinned'), () => {
      const fd = openSync(box, constants.O_RDONLY | constants.O_DIRECTORY);
      try {
        if (fstatSync(fd, { bigint: true }).ino !== clean.ino) return false;
        spawnSync('/bin/sh', ['-c', 'cd /proc/self/fd/3 && exec git status --short'], {
          env: hostEnv('control-pinned'),
          stdio: ['ignore', 'ignore', 'ignore', fd],
        });
        return true;
      } finally {
        closeSync(fd);
      }
    });
    writeFileSync(join(workspace, 'stop'), '');
    const result = await run;

    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/swaps \d+/);
    expect({ runs: byPath, landed: existsSync(join(out, 'control-by-path')) }).toMatchObject({
      landed: true,
    });
    expect({ runs: pinned, landed: existsSync(join(out, 'control-pinned')) }).toMatchObject({ landed: true });
    // Neither directory let git out: the planted one was made in the session, and the clean one lies
    // inside the workspace, where its name can be swapped while git runs.
    expect(existsSync(join(out, 'escalated'))).toBe(false);
    const lines = notices(result.stdout);
    expect(lines).toContainEqual(
      expect.stringMatching(
        /^Sandbox: ran `git status --short` inside the sandbox, not outside as policy allows: the working directory \S+\/ws\/(box|evil) lies inside \S+\/ws, where the sandbox can rename or replace it/,
      ),
    );
    expect(lines).toContain('Sandbox: ran `git status --short` OUTSIDE the sandbox, as policy allows');
  }, 180_000);
});
