// The path guard's chains and kept links, for real: the native ux-path-guard watching real directories
// through createPathGuard.
//  - A chain target (`.config/git` below a home with no `.config`): the guard follows each directory
//    on the way as it appears and takes away only the last name; a link on the way is taken away; a
//    directory renamed off the way is dropped, and what then has its name is followed.
//  - A kept link (a protected name that exists as a symbolic link): left alone at registration and at
//    the last look; whatever replaces it is taken away and the link made again.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmdirSync,
  rmSync,
  symlinkSync,
  unlinkSync,
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
  plant,
  quarantineEntries,
  settled,
  waitFor,
} from '../test/guard-test-helpers.js';
import type { GuardTarget } from './path-guard.js';

useLeakCheck();

let guardBinary: string;
beforeAll(() => {
  guardBinary = builtGuard();
});

const WHY = 'global git configuration';
const WHY_LOGIN = 'shell start-up file';

/**
 * Runs a shell script in `cwd` as one fast process (what a command does, often faster than the guard);
 * a step that fails because the guard took something away first is the guard's doing, not an error.
 */
const sh = (cwd: string, script: string) => spawnSync('/bin/sh', ['-c', script], { cwd, stdio: 'ignore' });

const isDir = (path: string) => exists(path) && lstatSync(path).isDirectory();
const linkText = (path: string) =>
  exists(path) && lstatSync(path).isSymbolicLink() ? readlinkSync(path) : undefined;

function setup(targets: (ws: string) => GuardTarget[]) {
  const scratch = tempDir('ux-guard-chain-');
  const ws = join(scratch, 'ws');
  mkdirSync(ws);
  const quarantine = join(scratch, 'quarantine');
  const guard = newGuard({ binaryPath: guardBinary, quarantineDir: quarantine });
  const { notices, onNotice } = collector();
  return {
    scratch,
    ws,
    quarantine,
    guard,
    notices,
    start: () => guard.watch(targets(ws), onNotice),
    settle: () => settled(guard, scratch),
    paths: () => notices.map((notice) => notice.path),
    /** What the quarantine holds, the barriers of `settle` left out. */
    taken: () => quarantineEntries(quarantine).filter((name) => !name.endsWith('.barrier')),
  };
}

describe('a chain target: a protected name below directories that do not exist yet', () => {
  it('mkdir -p makes the directories on the way, which stay; the last name is taken away whole', async () => {
    const t = setup((ws) => [{ dir: ws, name: '.config/git', why: WHY }]);
    const watch = await t.start();
    // One fast process: the guard sees .config appear after git is already inside it.
    sh(t.ws, 'mkdir -p .config/git && printf "[core]\\n\\tfsmonitor = x\\n" > .config/git/config');
    await waitFor(() => !exists(join(t.ws, '.config', 'git')), 'git to be taken away');
    expect(isDir(join(t.ws, '.config'))).toBe(true);
    // Beside it, anything else is the command's.
    mkdirSync(join(t.ws, '.config', 'other'));
    writeFileSync(join(t.ws, '.config', 'other', 'file'), 'x');
    await watch.stop();
    expect(readFileSync(join(t.ws, '.config', 'other', 'file'), 'utf8')).toBe('x');
    expect(t.paths()).toEqual([join(t.ws, '.config', 'git')]);
    // Taken whole, before or after its config was written (the command's printf then failed).
    expect(lstatSync(t.notices[0]?.movedTo ?? '').isDirectory()).toBe(true);
    expect(t.notices[0]?.message).toContain(`the command created ${join(t.ws, '.config', 'git')} (${WHY})`);
  });

  it('each directory on the way is followed as it appears, one at a time, several levels deep', async () => {
    const t = setup((ws) => [{ dir: ws, name: '.local/share/systemd', why: WHY_LOGIN }]);
    const watch = await t.start();
    mkdirSync(join(t.ws, '.local'));
    await t.settle();
    mkdirSync(join(t.ws, '.local', 'share'));
    await t.settle();
    writeFileSync(join(t.ws, '.local', 'share', 'systemd'), 'a file is taken too');
    await waitFor(() => !exists(join(t.ws, '.local', 'share', 'systemd')), 'systemd to be taken away');
    // The same again in one breath, into a fresh tree renamed into place at the first level.
    sh(
      t.ws,
      'rmdir .local/share && mkdir -p staging/share/systemd/user && mv staging .local/x && mv .local/x/share .local/share',
    );
    await waitFor(
      () => !exists(join(t.ws, '.local', 'share', 'systemd')),
      'the renamed systemd to be taken away',
    );
    await watch.stop();
    expect(isDir(join(t.ws, '.local', 'share'))).toBe(true);
    expect(t.paths()).toEqual([join(t.ws, '.local', 'share', 'systemd')]);
    expect(t.taken()).toHaveLength(2);
  });

  it('a tree built elsewhere and renamed into place on the way: what it holds under the name is taken', async () => {
    const t = setup((ws) => [{ dir: ws, name: '.config/git', why: WHY }]);
    const watch = await t.start();
    sh(
      t.ws,
      'mkdir -p staging/git staging/keep && echo evil > staging/git/config && echo mine > staging/keep/f && mv staging .config',
    );
    await waitFor(() => !exists(join(t.ws, '.config', 'git')), 'git to be taken away');
    await watch.stop();
    expect(readFileSync(join(t.ws, '.config', 'keep', 'f'), 'utf8')).toBe('mine\n');
    expect(t.paths()).toEqual([join(t.ws, '.config', 'git')]);
  });

  it('a link on the way is taken away (it could lead the rest of the path anywhere); a file there is left', async () => {
    const t = setup((ws) => [{ dir: ws, name: '.config/git', why: WHY }]);
    const elsewhere = join(t.scratch, 'elsewhere');
    mkdirSync(join(elsewhere, 'git'), { recursive: true });
    writeFileSync(join(elsewhere, 'git', 'config'), 'evil');
    const watch = await t.start();
    symlinkSync(elsewhere, join(t.ws, '.config'));
    await waitFor(() => !exists(join(t.ws, '.config')), 'the link to be taken away');
    // What it pointed to is not touched; the link itself is in the quarantine, as a link.
    expect(readFileSync(join(elsewhere, 'git', 'config'), 'utf8')).toBe('evil');
    await waitFor(() => t.notices.length === 1, 'the notice');
    expect(t.notices[0]?.path).toBe(join(t.ws, '.config'));
    expect(t.notices[0]?.message).toContain(
      `(a link where ux follows the way to ${join(t.ws, '.config', 'git')}: ${WHY})`,
    );
    expect(readlinkSync(t.notices[0]?.movedTo ?? '')).toBe(elsewhere);

    // A file where a directory is needed is left (nothing can be made below it) and followed once it
    // is replaced by a directory.
    writeFileSync(join(t.ws, '.config'), 'just a file');
    await t.settle();
    expect(readFileSync(join(t.ws, '.config'), 'utf8')).toBe('just a file');
    sh(t.ws, 'rm .config && mkdir -p .config/git');
    await waitFor(() => !exists(join(t.ws, '.config', 'git')), 'git to be taken away');
    await watch.stop();
    expect(isDir(join(t.ws, '.config'))).toBe(true);
    expect(t.paths()).toEqual([join(t.ws, '.config'), join(t.ws, '.config', 'git')]);
  });

  it('a directory renamed off the way is no longer watched; a new one with the name is, and so is one moved back', async () => {
    const t = setup((ws) => [{ dir: ws, name: '.config/git', why: WHY }]);
    const watch = await t.start();
    mkdirSync(join(t.ws, '.config'));
    await t.settle(); // the guard watches inside .config now
    renameSync(join(t.ws, '.config'), join(t.ws, 'old'));
    await t.settle();
    // Off the way: the command's own directory.
    mkdirSync(join(t.ws, 'old', 'git'));
    await t.settle();
    expect(isDir(join(t.ws, 'old', 'git'))).toBe(true);
    // A new .config is followed at once.
    sh(t.ws, 'mkdir -p .config/git && touch .config/git/config');
    await waitFor(() => !exists(join(t.ws, '.config', 'git')), 'the new git to be taken away');
    // The old one moved back over the (empty) new one: followed again, its git taken.
    renameSync(join(t.ws, 'old'), join(t.ws, '.config'));
    await waitFor(() => !exists(join(t.ws, '.config', 'git')), 'the moved-back git to be taken away');
    expect(isDir(join(t.ws, '.config'))).toBe(true);
    // Removed and made again.
    rmdirSync(join(t.ws, '.config'));
    sh(t.ws, 'mkdir -p .config/git');
    await waitFor(() => !exists(join(t.ws, '.config', 'git')), 'git in the remade .config to be taken away');
    await watch.stop();
    expect(t.paths()).toEqual([join(t.ws, '.config', 'git')]);
    expect(t.taken()).toHaveLength(3);
  });

  it('the watched directory exchanged (renameat2 RENAME_EXCHANGE) with one filled beforehand: followed, its git taken', async () => {
    const t = setup((ws) => [{ dir: ws, name: '.config/git', why: WHY }]);
    const watch = await t.start();
    mkdirSync(join(t.ws, '.config'));
    await t.settle(); // the guard watches inside .config now
    mkdirSync(join(t.ws, 'filled', 'git'), { recursive: true });
    writeFileSync(join(t.ws, 'filled', 'git', 'config'), 'evil');
    await t.settle(); // not on the way: left
    // Both names are swapped in one step: no name is ever missing, no directory ever created.
    const exchange = spawnSync(
      'python3',
      [
        '-c',
        'import ctypes, sys; libc = ctypes.CDLL(None, use_errno=True); sys.exit(0 if libc.renameat2(-100, b"filled", -100, b".config", 2) == 0 else ctypes.get_errno())',
      ],
      { cwd: t.ws },
    );
    expect(exchange.status, 'renameat2(RENAME_EXCHANGE) through python3').toBe(0);
    await waitFor(
      () => !exists(join(t.ws, '.config', 'git')),
      'git of the exchanged directory to be taken away',
    );
    // The directory that went off the way (now `filled`) is the command's.
    mkdirSync(join(t.ws, 'filled', 'git'));
    await t.settle();
    await watch.stop();
    expect(isDir(join(t.ws, 'filled', 'git'))).toBe(true);
    expect(t.paths()).toEqual([join(t.ws, '.config', 'git')]);
  });

  it('directories that exist at registration are followed at once; a link on the way is taken, the last name is left until the last look', async () => {
    const t = setup((ws) => [
      { dir: ws, name: 'a/b/c/d', why: WHY },
      { dir: ws, name: 'x/y/z', why: WHY },
      { dir: ws, name: 'l/m', why: WHY },
    ]);
    // Made after the plan, before the watch (another sandbox, say): the plan saw none of them.
    mkdirSync(join(t.ws, 'a', 'b'), { recursive: true });
    mkdirSync(join(t.ws, 'x', 'y', 'z'), { recursive: true });
    mkdirSync(join(t.scratch, 'elsewhere', 'm'), { recursive: true });
    symlinkSync(join(t.scratch, 'elsewhere'), join(t.ws, 'l'));
    const watch = await t.start();
    await waitFor(() => !exists(join(t.ws, 'l')), 'the link on the way to be taken');
    mkdirSync(join(t.ws, 'a', 'b', 'c'));
    await t.settle();
    writeFileSync(join(t.ws, 'a', 'b', 'c', 'd'), 'x');
    await waitFor(() => !exists(join(t.ws, 'a', 'b', 'c', 'd')), 'd to be taken away');
    expect(isDir(join(t.ws, 'x', 'y', 'z'))).toBe(true); // no sweep when the watch starts
    await watch.stop(); // the last look takes it
    expect(exists(join(t.ws, 'x', 'y', 'z'))).toBe(false);
    expect(isDir(join(t.scratch, 'elsewhere', 'm'))).toBe(true);
    expect(t.paths().sort()).toEqual(
      [join(t.ws, 'l'), join(t.ws, 'a', 'b', 'c', 'd'), join(t.ws, 'x', 'y', 'z')].sort(),
    );
  });

  it('stop() goes down the chain once more: what was made just before it is taken and reported first', async () => {
    const t = setup((ws) => [{ dir: ws, name: '.config/fish', why: WHY_LOGIN }]);
    const watch = await t.start();
    sh(t.ws, 'mkdir -p .config/fish/conf.d && echo "touch /tmp/x" > .config/fish/conf.d/x.fish');
    await watch.stop();
    expect(exists(join(t.ws, '.config', 'fish'))).toBe(false);
    expect(t.paths()).toEqual([join(t.ws, '.config', 'fish')]);
  });

  it("a chain's last name that is a work tree's .git: a directory there is checked, not taken; a file is taken", async () => {
    const t = setup((ws) => [
      { dir: ws, name: 'sub/.git', why: WHY, repository: true },
      { dir: ws, name: 'other/.git', why: WHY, repository: true },
    ]);
    const watch = await t.start();
    execFileSync('git', ['init', '-q', join(t.ws, 'sub')]);
    sh(t.ws, 'mkdir other && echo "gitdir: /elsewhere" > other/.git');
    await waitFor(() => !exists(join(t.ws, 'other', '.git')), 'the .git file to be taken away');
    await watch.stop();
    expect(isDir(join(t.ws, 'sub', '.git'))).toBe(true);
    expect(t.paths()).toEqual([join(t.ws, 'other', '.git')]);
  });
});

describe('a kept link: a protected name that exists as a symbolic link', () => {
  const stow = (ws: string) => {
    mkdirSync(join(ws, 'dotfiles'));
    writeFileSync(join(ws, 'dotfiles', 'bashrc'), '# mine\n');
    symlinkSync('dotfiles/bashrc', join(ws, '.bashrc'));
  };
  const kept = (ws: string): GuardTarget[] => [
    { dir: ws, name: '.bashrc', link: 'dotfiles/bashrc', why: WHY_LOGIN },
  ];

  it('is left alone at registration and at the last look', async () => {
    const t = setup(kept);
    stow(t.ws);
    const before = lstatSync(join(t.ws, '.bashrc')).ino;
    const watch = await t.start();
    await t.settle();
    await watch.stop();
    expect(lstatSync(join(t.ws, '.bashrc')).ino).toBe(before);
    expect(t.notices).toEqual([]);
    expect(t.taken()).toEqual([]);
  });

  it('moved away: made again at once, with its text; what was moved stays where it went', async () => {
    const t = setup(kept);
    stow(t.ws);
    const watch = await t.start();
    renameSync(join(t.ws, '.bashrc'), join(t.ws, 'moved'));
    await waitFor(() => linkText(join(t.ws, '.bashrc')) === 'dotfiles/bashrc', 'the link to be made again');
    await watch.stop();
    expect(linkText(join(t.ws, 'moved'))).toBe('dotfiles/bashrc');
    expect(t.notices).toHaveLength(1);
    expect(t.notices[0]).toMatchObject({ path: join(t.ws, '.bashrc') });
    expect(t.notices[0]?.error).toBeUndefined();
    expect(t.notices[0]?.message).toBe(
      `the command moved or removed ${join(t.ws, '.bashrc')}, a link to dotfiles/bashrc (${WHY_LOGIN}); a sandboxed command may not change it, so ux put the link back.`,
    );
    expect(t.taken()).toEqual([]);
  });

  it('replaced by a file (renamed over it, or after removing it): the file is taken away, the link made again', async () => {
    const t = setup(kept);
    stow(t.ws);
    const watch = await t.start();
    plant(join(t.ws, '.bashrc'), 'touch /tmp/pwned\n'); // written beside it, renamed over the link
    await waitFor(() => linkText(join(t.ws, '.bashrc')) === 'dotfiles/bashrc', 'the link to be made again');
    await waitFor(() => t.notices.length === 1, 'the notice');
    const movedTo = t.notices[0]?.movedTo ?? '';
    expect(readFileSync(movedTo, 'utf8')).toBe('touch /tmp/pwned\n');
    expect(t.notices[0]?.message).toBe(
      `the command replaced ${join(t.ws, '.bashrc')}, a link to dotfiles/bashrc (${WHY_LOGIN}); a sandboxed command may not change it, so ux moved what it put there to ${movedTo} and put the link back.`,
    );
    // Removed, then a file (the command races the guard: either its file is taken, or its write goes
    // through the link made again; the link is there in the end, the file's content nowhere else).
    sh(t.ws, 'rm .bashrc; printf "touch /tmp/pwned\\n" > .bashrc 2>/dev/null; true');
    await t.settle();
    await watch.stop();
    expect(linkText(join(t.ws, '.bashrc'))).toBe('dotfiles/bashrc');
    // The write through the remade link landed in what it points to (here writable; a plan binds it
    // read-only), never in a file of its own at .bashrc.
    const landed = readFileSync(join(t.ws, 'dotfiles', 'bashrc'), 'utf8');
    expect(['# mine\n', 'touch /tmp/pwned\n']).toContain(landed);
    // One notice per path and registration.
    expect(t.paths()).toEqual([
      join(t.ws, '.bashrc'),
      ...(t.notices.length > 1 ? [join(t.ws, '.bashrc')] : []),
    ]);
  });

  it('replaced by a directory or by a link with another text: taken away, the link made again', async () => {
    const t = setup(kept);
    stow(t.ws);
    const watch = await t.start();
    symlinkSync('/tmp/evil-bashrc', join(t.ws, 'other'));
    renameSync(join(t.ws, 'other'), join(t.ws, '.bashrc'));
    await waitFor(() => t.notices.length === 1, 'the notice');
    expect(linkText(join(t.ws, '.bashrc'))).toBe('dotfiles/bashrc');
    expect(readlinkSync(t.notices[0]?.movedTo ?? '')).toBe('/tmp/evil-bashrc');
    mkdirSync(join(t.ws, 'dir'));
    writeFileSync(join(t.ws, 'dir', 'f'), 'x');
    unlinkSync(join(t.ws, '.bashrc'));
    try {
      renameSync(join(t.ws, 'dir'), join(t.ws, '.bashrc'));
    } catch {
      // The guard made the link again first: the rename found it there.
    }
    await t.settle();
    await watch.stop();
    expect(linkText(join(t.ws, '.bashrc'))).toBe('dotfiles/bashrc');
    expect(t.taken().length).toBeGreaterThanOrEqual(1);
  });

  it('a link with the same text put in its place is kept as it is (nothing taken)', async () => {
    const t = setup(kept);
    stow(t.ws);
    const watch = await t.start();
    symlinkSync('dotfiles/bashrc', join(t.ws, 'same'));
    const ino = lstatSync(join(t.ws, 'same')).ino;
    renameSync(join(t.ws, 'same'), join(t.ws, '.bashrc'));
    await t.settle();
    await watch.stop();
    expect(lstatSync(join(t.ws, '.bashrc')).ino).toBe(ino);
    expect(t.notices).toEqual([]);
    expect(t.taken()).toEqual([]);
  });

  it('not the link the plan saw when the watch starts (changed meanwhile): taken away and made again', async () => {
    const t = setup(kept);
    mkdirSync(join(t.ws, 'dotfiles'));
    writeFileSync(join(t.ws, '.bashrc'), 'touch /tmp/pwned\n');
    const watch = await t.start();
    await waitFor(() => linkText(join(t.ws, '.bashrc')) === 'dotfiles/bashrc', 'the link to be made');
    await waitFor(() => t.notices.length === 1, 'the notice');
    expect(readFileSync(t.notices[0]?.movedTo ?? '', 'utf8')).toBe('touch /tmp/pwned\n');
    await watch.stop();
    // Missing when the watch starts: made.
    const u = setup(kept);
    const again = await u.start();
    await waitFor(() => linkText(join(u.ws, '.bashrc')) === 'dotfiles/bashrc', 'the missing link to be made');
    await again.stop();
    expect(u.notices.map((notice) => notice.message)).toEqual([
      expect.stringContaining('so ux put the link back'),
    ]);
  });

  it('two watches keep one link: the record of the first holds while either is live', async () => {
    const t = setup(kept);
    stow(t.ws);
    const first = await t.start();
    const { notices, onNotice } = collector();
    const second = await t.guard.watch(kept(t.ws), onNotice);
    plant(join(t.ws, '.bashrc'), 'evil\n');
    await waitFor(() => t.notices.length === 1 && notices.length === 1, 'both notices');
    expect(linkText(join(t.ws, '.bashrc'))).toBe('dotfiles/bashrc');
    await first.stop();
    // The link the guard made is the one kept now: the second watch leaves it alone.
    await t.settle();
    await second.stop();
    expect(linkText(join(t.ws, '.bashrc'))).toBe('dotfiles/bashrc');
    expect(t.taken()).toHaveLength(1);
    expect(readdirSync(t.ws).sort()).toEqual(['.bashrc', 'dotfiles']);
  });

  it('control: without the kept link the same swap stays', async () => {
    const t = setup(() => []);
    stow(t.ws);
    await t.start();
    plant(join(t.ws, '.bashrc'), 'evil\n');
    await t.settle();
    expect(readFileSync(join(t.ws, '.bashrc'), 'utf8')).toBe('evil\n');
    rmSync(join(t.ws, '.bashrc'));
  });
});
