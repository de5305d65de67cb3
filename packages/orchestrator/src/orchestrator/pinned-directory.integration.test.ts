// The working directory an escalation is decided on is opened once, and every check looks at that
// directory and the ones above it through their descriptors: a path swapped between the open and the
// checks (a sandboxed loop renaming directories, or flipping a link) does not change what is checked.
// Each test swaps the path after the open and shows, as a control, that a check by path at that moment
// would have looked at the other directory.
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  realpathSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import type { EscalationScope } from './escalation-scope.js';
import { byPath, canonicalPath, type PinnedDirectory, pinDirectory } from './pinned-directory.js';
import {
  configurationProblem,
  renamedPathProblem,
  type WorkdirTrustInput,
  workdirTrust,
} from './workdir-trust.js';

const GIT_ENV = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.com',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.com',
};

function git(cwd: string, ...args: string[]): void {
  execFileSync('git', args, { cwd, env: GIT_ENV, stdio: 'ignore' });
}

function identity(path: string) {
  const stat = statSync(path, { bigint: true });
  return { dev: `${stat.dev}`, ino: `${stat.ino}` };
}

function pin(path: string): PinnedDirectory {
  const result = pinDirectory(path);
  if (!result.pinned) throw new Error(`cannot pin ${path}: ${result.problem}`);
  onTestFinished(() => result.pinned.release());
  return result.pinned;
}

/**
 * A workspace (the one writable root) whose set-up predates the session; `during` runs after the
 * session started (what a sandboxed command does).
 */
async function session(setup: (ws: string) => void) {
  const ws = realpathSync(tempDir('ux-pinned-'));
  setup(ws);
  const sessionStartMs = Date.now() + 60;
  while (Date.now() <= sessionStartMs + 20) await new Promise((resolve) => setTimeout(resolve, 10));
  const scope: EscalationScope = {
    writableRoots: [ws],
    layoutRoots: [ws],
    tmpRoots: [],
    privateTmp: false,
    sessionStartMs,
    env: {},
    homeDir: join(ws, 'home'),
  };
  const input = (cwd: string, argv: string[] = ['git', 'status']): WorkdirTrustInput => ({
    cwd,
    argv,
    programNames: [argv[0]!],
    scope,
  });
  /** The same checks on what the path names now (the control: a check made at this moment). */
  const byPathNow = (cwd: string, argv?: string[]) => configurationProblem(input(cwd, argv), pin(cwd));
  return { ws, scope, input, byPathNow };
}

/**
 * A repository made during the session whose configuration runs a program (what an attack plants), in
 * a directory that predates it (so that its git directory, not the directory, is what gives it away).
 */
function planted(dir: string): void {
  git(dir, 'init', '-q');
  git(dir, 'config', 'core.fsmonitor', 'touch /var/tmp/never #');
}

describe('pinDirectory', () => {
  it('opens the directory and each one above it, and reaches names in them through the descriptors', () => {
    const base = realpathSync(tempDir('ux-pinned-'));
    const dir = join(base, 'a', 'b');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'f'), 'f');
    const pinned = pin(dir);
    expect(pinned.path).toBe(dir);
    expect(pinned.identity).toEqual(identity(dir));
    const above: string[] = [];
    for (let at = dir; at !== '/'; at = dirname(at)) above.push(dirname(at));
    expect(pinned.ancestors).toEqual(above.map(identity));
    expect(pinned.reach(dir)).toMatch(/^\/proc\/self\/fd\/\d+\/\.$/);
    expect(pinned.reach(join(dir, 'f'))).toMatch(/^\/proc\/self\/fd\/\d+\/f$/);
    expect(pinned.reach(join(base, 'a', 'other'))).toMatch(/^\/proc\/self\/fd\/\d+\/other$/);
    expect(statSync(pinned.reach(join(base, 'a')), { bigint: true }).ino).toBe(
      statSync(join(base, 'a'), { bigint: true }).ino,
    );
    // `/` is not swappable: reached as it is; paths elsewhere too.
    expect(pinned.reach('/etc/hostname')).toBe('/etc/hostname');
    const fd = /^\/proc\/self\/fd\/(\d+)/.exec(pinned.reach(dir))![1];
    pinned.release();
    expect(existsSync(`/proc/self/fd/${fd}`)).toBe(false);
    pinned.release();
  });

  it('pins `/` with no ancestors, and says when there is no directory to pin', () => {
    const root = pin('/');
    expect(root.ancestors).toEqual([]);
    expect(root.path).toBe('/');
    const base = realpathSync(tempDir('ux-pinned-'));
    writeFileSync(join(base, 'file'), '');
    expect(pinDirectory(join(base, 'missing'))).toMatchObject({ problem: 'missing' });
    expect(pinDirectory(join(base, 'file'))).toMatchObject({ problem: 'missing' });
  });

  it('follows a link as chdir would, and names the directory it leads to', () => {
    const base = realpathSync(tempDir('ux-pinned-'));
    mkdirSync(join(base, 'real'));
    symlinkSync('real', join(base, 'link'));
    const pinned = pin(join(base, 'link'));
    expect(pinned.path).toBe(join(base, 'real'));
    expect(pinned.identity).toEqual(identity(join(base, 'real')));
  });

  it('names what a path below it reaches as the kernel does, never walking the name again', () => {
    const base = realpathSync(tempDir('ux-pinned-'));
    mkdirSync(join(base, 'box'));
    writeFileSync(join(base, 'box', 'f'), 'checked');
    const pinned = pin(join(base, 'box'));
    renameSync(join(base, 'box'), join(base, 'moved'));
    mkdirSync(join(base, 'box'));
    writeFileSync(join(base, 'box', 'f'), 'other');
    expect(canonicalPath(join(base, 'box', 'f'), pinned.reach)).toBe(join(base, 'moved', 'f'));
    // Control: by path, the same name is now the other file.
    expect(canonicalPath(join(base, 'box', 'f'), byPath)).toBe(join(base, 'box', 'f'));
  });
});

describe('configurationProblem: a path swapped after the open does not change what is checked', () => {
  it('a clean repository renamed away for a planted one: the clean one is what was checked', async () => {
    const { ws, input, byPathNow } = await session((ws) => {
      mkdirSync(join(ws, 'box'));
      git(join(ws, 'box'), 'init', '-q');
      mkdirSync(join(ws, 'evil'));
    });
    const box = join(ws, 'box');
    const pinned = pin(box);
    planted(join(ws, 'evil'));
    renameSync(box, join(ws, 'clean'));
    renameSync(join(ws, 'evil'), box);

    expect(configurationProblem(input(box), pinned)).toBeUndefined();
    // The broker will open `box` and find another directory there: it compares and refuses.
    expect(identity(box)).not.toEqual(pinned.identity);
    // Control: a check by path at this moment looks at the planted repository.
    expect(byPathNow(box)).toContain(
      `the git directory ${join(box, '.git')} was created during this session`,
    );
  });

  it('a planted repository swapped for a clean one after the open is still refused', async () => {
    const { ws, input, byPathNow } = await session((ws) => {
      mkdirSync(join(ws, 'clean'));
      git(join(ws, 'clean'), 'init', '-q');
      mkdirSync(join(ws, 'box'));
    });
    const box = join(ws, 'box');
    planted(box);
    const pinned = pin(box);
    renameSync(box, join(ws, 'evil'));
    renameSync(join(ws, 'clean'), box);

    expect(configurationProblem(input(box), pinned)).toContain(
      `the git directory ${join(box, '.git')} was created during this session`,
    );
    expect(byPathNow(box)).toBeUndefined();
  });

  it('a link on the path flipped to a planted repository: the directory it led to is what was checked', async () => {
    const { ws, input, byPathNow } = await session((ws) => {
      mkdirSync(join(ws, 'clean'));
      git(join(ws, 'clean'), 'init', '-q');
      symlinkSync('clean', join(ws, 'box'));
      mkdirSync(join(ws, 'evil'));
    });
    planted(join(ws, 'evil'));
    const pinned = pin(join(ws, 'box'));
    symlinkSync('evil', join(ws, 'box.new'));
    renameSync(join(ws, 'box.new'), join(ws, 'box'));

    expect(pinned.path).toBe(join(ws, 'clean'));
    expect(configurationProblem(input(join(ws, 'box')), pinned)).toBeUndefined();
    expect(byPathNow(join(ws, 'box'))).toContain('was created during this session');
  });

  it('the directory moved under a planted parent after the open: the parent it had is what was checked', async () => {
    const { ws, input, byPathNow } = await session((ws) => {
      git(ws, 'init', '-q');
      mkdirSync(join(ws, 'a', 'sub'), { recursive: true });
      mkdirSync(join(ws, 'e'));
    });
    const sub = join(ws, 'a', 'sub');
    const pinned = pin(sub);
    // The same directory, at the same path, below another parent: `a` is now the planted one.
    planted(join(ws, 'e'));
    renameSync(sub, join(ws, 'e', 'sub'));
    renameSync(join(ws, 'a'), join(ws, 'old-a'));
    renameSync(join(ws, 'e'), join(ws, 'a'));
    expect(identity(sub)).toEqual(pinned.identity);

    expect(configurationProblem(input(sub), pinned)).toBeUndefined();
    // The broker compares the parent too: the `a` that was checked, not the one there now.
    expect(pinned.ancestors[0]).toEqual(identity(join(ws, 'old-a')));
    expect(pinned.ancestors[0]).not.toEqual(identity(join(ws, 'a')));
    expect(byPathNow(sub)).toContain(
      `the git directory ${join(ws, 'a', '.git')} was created during this session`,
    );
  });

  it('a directory an option names is resolved from the pinned directory (git -C sub)', async () => {
    const { ws, input, byPathNow } = await session((ws) => {
      mkdirSync(join(ws, 'box', 'sub'), { recursive: true });
      git(join(ws, 'box'), 'init', '-q');
      mkdirSync(join(ws, 'evil', 'sub'), { recursive: true });
    });
    const box = join(ws, 'box');
    const pinned = pin(box);
    planted(join(ws, 'evil', 'sub'));
    renameSync(box, join(ws, 'clean'));
    renameSync(join(ws, 'evil'), box);

    const argv = ['git', '-C', 'sub', 'status'];
    expect(configurationProblem(input(box, argv), pinned)).toBeUndefined();
    expect(byPathNow(box, argv)).toContain('was created during this session');
  });

  it('a file a program reads, swapped with its directory: the one in the pinned directory is checked', async () => {
    const { ws, input, byPathNow } = await session((ws) => {
      mkdirSync(join(ws, 'box'));
      writeFileSync(join(ws, 'box', 'Makefile'), 'all:\n\ttrue\n');
      mkdirSync(join(ws, 'evil'));
    });
    const box = join(ws, 'box');
    const pinned = pin(box);
    writeFileSync(join(ws, 'evil', 'Makefile'), 'all:\n\ttouch /var/tmp/never\n');
    renameSync(box, join(ws, 'clean'));
    renameSync(join(ws, 'evil'), box);

    expect(configurationProblem(input(box, ['make', 'all']), pinned)).toBeUndefined();
    expect(byPathNow(box, ['make', 'all'])).toContain(`${join(box, 'Makefile')} was created or changed`);
  });
});

describe('renamedPathProblem: a program outside finds its configuration by name', () => {
  it('lets a writable root itself, or a directory the sandbox cannot write, out; keeps a directory inside one in', async () => {
    const { ws, input } = await session((ws) => mkdirSync(join(ws, 'src', 'lib'), { recursive: true }));
    expect(renamedPathProblem(input(ws), pin(ws))).toBeUndefined();
    const elsewhere = realpathSync(tempDir('ux-pinned-elsewhere-'));
    expect(renamedPathProblem(input(elsewhere), pin(elsewhere))).toBeUndefined();
    expect(renamedPathProblem(input(join(ws, 'src', 'lib')), pin(join(ws, 'src', 'lib')))).toBe(
      `the working directory ${join(ws, 'src', 'lib')} lies inside ${ws}, where the sandbox can rename or replace it while the program runs; outside, the program would find its configuration by that name, which could lead to a directory nobody checked (only ${ws} itself, or a directory the sandbox cannot write, runs outside)`,
    );
  });

  it('looks at a directory an option names, and at every directory and link the program walks to it', async () => {
    const elsewhere = realpathSync(tempDir('ux-pinned-elsewhere-'));
    const { ws, scope, input } = await session((ws) => {
      mkdirSync(join(ws, 'a', 'inner'), { recursive: true });
      symlinkSync(elsewhere, join(ws, 'link'));
    });
    expect(renamedPathProblem(input(ws, ['git', '-C', 'a', 'status']), pin(ws))).toMatch(
      new RegExp(`^${join(ws, 'a')}, on the way to a \\(which the command names\\), lies inside ${ws}, `),
    );
    // The link leads out of every writable root, but the sandbox can point it elsewhere meanwhile.
    expect(renamedPathProblem(input(ws, ['git', '-C', 'link', 'status']), pin(ws))).toMatch(
      new RegExp(`^${join(ws, 'link')}, on the way to link `),
    );
    // Named by its own path, the same directory is out of the sandbox's reach.
    expect(renamedPathProblem(input(ws, ['git', '-C', elsewhere, 'status']), pin(ws))).toBeUndefined();
    // A writable root nested in another: the directories between them can be renamed, the roots cannot.
    const nested = {
      ...input(join(ws, 'a', 'inner')),
      scope: {
        ...scope,
        writableRoots: [ws, join(ws, 'a', 'inner')],
        layoutRoots: [ws, join(ws, 'a', 'inner')],
      },
    };
    expect(renamedPathProblem(nested, pin(join(ws, 'a', 'inner')))).toMatch(
      new RegExp(
        `^${join(ws, 'a')}, on the way to the working directory ${join(ws, 'a', 'inner')}, lies inside ${ws}, `,
      ),
    );
    const stacked = {
      ...input(join(ws, 'a')),
      scope: { ...scope, writableRoots: [ws, join(ws, 'a')], layoutRoots: [ws, join(ws, 'a')] },
    };
    expect(renamedPathProblem(stacked, pin(join(ws, 'a')))).toBeUndefined();
  });

  it('is what workdirTrust says last, when nothing the sandbox wrote is in the way', async () => {
    const { ws, input } = await session((ws) => {
      git(ws, 'init', '-q');
      mkdirSync(join(ws, 'src'));
    });
    const verdict = workdirTrust(input(join(ws, 'src')));
    verdict.pin?.release();
    expect(verdict).toMatchObject({ trusted: false, why: expect.stringContaining(`lies inside ${ws}`) });
    const root = workdirTrust(input(ws));
    root.pin?.release();
    expect(root).toMatchObject({ trusted: true, cwd: ws });
  });
});
