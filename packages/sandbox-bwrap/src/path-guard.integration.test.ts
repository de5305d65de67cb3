// The host-side path guard for real: the native ux-path-guard watching real directories with inotify,
// driven through createPathGuard (and, for the host's death, by speaking its protocol directly), and
// the ux-sandbox-exec shim run under parents that ignore and block signals.
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type SandboxNotice, SandboxUnavailableError } from '@ux/protocol/core';
import { isAlive } from '@ux/protocol-testing';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { checkedNativeBinary, nativeBinaryPath } from './native-path.js';
import { createPathGuard, GUARD_STOPPED_ERROR, type GuardTarget, type PathGuard } from './path-guard.js';

useLeakCheck();

const packageRoot = fileURLToPath(new URL('..', import.meta.url));
let guardBinary: string;
let execShim: string;

beforeAll(() => {
  // A no-op when the binaries are newer than their sources.
  execFileSync(process.execPath, [join(packageRoot, 'scripts', 'build-native.mjs')], { stdio: 'inherit' });
  guardBinary = checkedNativeBinary('ux-path-guard');
  execShim = checkedNativeBinary('ux-sandbox-exec');
});

const exists = (path: string): boolean => {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
};

/** Polls `check` until it is true; generous, since machines are noisy. */
async function waitFor(check: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * Returns once `guard` has handled every file event that came before this call: a name watched in a
 * directory of its own is created and waited for, and the guard reads its one inotify queue in order.
 * Instead of a pause before checking that something was left alone.
 */
async function settled(guard: PathGuard): Promise<void> {
  const dir = tempDir('ux-guard-barrier-');
  const { notices, onNotice } = collector();
  const watch = await guard.watch([{ dir, name: '.barrier', why: 'a barrier' }], onNotice);
  writeFileSync(join(dir, '.barrier'), 'barrier');
  await waitFor(() => notices.length === 1, 'the barrier to be taken away');
  await watch.stop();
}

/** A guard closed when the test finishes, whatever happens. */
function newGuard(
  options: { quarantineDir?: string; removeOnExit?: string[]; binaryPath?: string } = {},
): PathGuard {
  const guard = createPathGuard({ binaryPath: options.binaryPath ?? guardBinary, ...options });
  onTestFinished(() => guard.close());
  return guard;
}

function collector(): { notices: SandboxNotice[]; onNotice: (notice: SandboxNotice) => void } {
  const notices: SandboxNotice[] = [];
  return { notices, onNotice: (notice) => notices.push(notice) };
}

const movedMessage = (path: string, why: string, movedTo: string) =>
  `the command created ${path} (${why}); a sandboxed command may not create it, so ux moved it to ${movedTo}. Create it outside the sandbox, or ask to run the command without the sandbox.`;
const removedMessage = (path: string, why: string) =>
  `the command created ${path} (${why}); a sandboxed command may not create it, so ux removed it. Create it outside the sandbox, or ask to run the command without the sandbox.`;

const WHY_GIT = 'git would read its config and run its hooks';
const WHY_CODEX = 'agent configuration';

function quarantineEntries(quarantine: string): string[] {
  return existsSync(quarantine) ? readdirSync(quarantine).filter((name) => name !== 'quarantine.log') : [];
}

describe('ux-path-guard through createPathGuard', () => {
  it('takes a created protected file away at once: moved into the quarantine whole, logged and reported', async () => {
    const ws = tempDir('ux-guard-ws-');
    const quarantine = join(tempDir('ux-guard-q-'), 'nested', 'quarantine');
    const guard = newGuard({ quarantineDir: quarantine });
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.codex', why: WHY_CODEX }], onNotice);
    const path = join(ws, '.codex');

    writeFileSync(path, 'model = "x"\n');
    await waitFor(() => !exists(path), `${path} to be taken away`);
    await waitFor(() => notices.length === 1, 'the notice');

    const [notice] = notices;
    expect(notice).toMatchObject({ kind: 'protected_path_undone', path });
    expect(notice?.error).toBeUndefined();
    const movedTo = notice?.movedTo ?? '';
    expect(movedTo.startsWith(`${quarantine}/`)).toBe(true);
    expect(basename(movedTo)).toMatch(new RegExp(`^\\d{8}T\\d{6}Z-${guard.pid}-\\d+-\\.codex$`));
    expect(readFileSync(movedTo, 'utf8')).toBe('model = "x"\n');
    expect(notice?.message).toBe(movedMessage(path, WHY_CODEX, movedTo));
    // The quarantine is created private, parents too, and tells a person what went where.
    expect(statSync(quarantine).mode & 0o777).toBe(0o700);
    expect(statSync(join(quarantine, '..')).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(quarantine, 'quarantine.log'), 'utf8')).toMatch(
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\t${path.replace(/\./g, '\\.')}\\t${basename(movedTo)}\\n$`,
      ),
    );

    await watch.stop();
    expect(notices).toHaveLength(1);
    await guard.close();
  });

  it('a directory made with mkdir, a tree renamed into place, a hard link and a symlink are each taken away whole', async () => {
    const ws = tempDir('ux-guard-ws-');
    const outside = tempDir('ux-guard-outside-');
    const quarantine = join(tempDir('ux-guard-q-'), 'q');
    const guard = newGuard({ quarantineDir: quarantine });
    const { notices, onNotice } = collector();
    const targets: GuardTarget[] = ['.git', '.agents', '.ux', '.codex'].map((name) => ({
      dir: ws,
      name,
      why: `${name} is protected`,
    }));
    const watch = await guard.watch(targets, onNotice);
    const noticeFor = (path: string) => notices.find((notice) => notice.path === path);

    // mkdir: IN_CREATE of a directory.
    mkdirSync(join(ws, '.git'));
    await waitFor(
      () => !exists(join(ws, '.git')) && noticeFor(join(ws, '.git')) !== undefined,
      'the new .git',
    );
    expect(statSync(noticeFor(join(ws, '.git'))?.movedTo ?? '').isDirectory()).toBe(true);

    // A tree built elsewhere in the workspace and renamed into place: IN_MOVED_TO, content and all.
    mkdirSync(join(ws, 'staging', 'hooks'), { recursive: true });
    writeFileSync(join(ws, 'staging', 'config'), '[core]\n\thooksPath = hooks\n');
    writeFileSync(join(ws, 'staging', 'hooks', 'pre-commit'), '#!/bin/sh\necho owned\n', { mode: 0o755 });
    renameSync(join(ws, 'staging'), join(ws, '.agents'));
    await waitFor(() => noticeFor(join(ws, '.agents')) !== undefined, 'the renamed .agents');
    expect(exists(join(ws, '.agents'))).toBe(false);
    const tree = noticeFor(join(ws, '.agents'))?.movedTo ?? '';
    expect(readFileSync(join(tree, 'config'), 'utf8')).toBe('[core]\n\thooksPath = hooks\n');
    expect(readFileSync(join(tree, 'hooks', 'pre-commit'), 'utf8')).toBe('#!/bin/sh\necho owned\n');

    // A hard link to a file outside: the link goes, the file stays.
    writeFileSync(join(outside, 'file'), 'outside');
    execFileSync('ln', [join(outside, 'file'), join(ws, '.ux')]);
    await waitFor(() => noticeFor(join(ws, '.ux')) !== undefined, 'the hard link .ux');
    expect(exists(join(ws, '.ux'))).toBe(false);
    expect(readFileSync(join(outside, 'file'), 'utf8')).toBe('outside');

    // A symlink is moved itself; what it points at is untouched.
    symlinkSync(outside, join(ws, '.codex'));
    await waitFor(() => noticeFor(join(ws, '.codex')) !== undefined, 'the symlink .codex');
    expect(exists(join(ws, '.codex'))).toBe(false);
    expect(readlinkSync(noticeFor(join(ws, '.codex'))?.movedTo ?? '')).toBe(outside);
    expect(readFileSync(join(outside, 'file'), 'utf8')).toBe('outside');

    expect(notices.map((notice) => notice.path).sort()).toEqual(targets.map((t) => join(ws, t.name)).sort());
    for (const notice of notices) {
      expect(notice.message).toBe(
        movedMessage(notice.path, `${basename(notice.path)} is protected`, notice.movedTo!),
      );
    }
    expect(quarantineEntries(quarantine)).toHaveLength(4);
    expect(readFileSync(join(quarantine, 'quarantine.log'), 'utf8').trim().split('\n')).toHaveLength(4);
    await watch.stop();
    await guard.close();
  });

  it('without a quarantine, a tree is removed without following the symlinks inside it', async () => {
    const ws = tempDir('ux-guard-ws-');
    const outside = tempDir('ux-guard-outside-');
    writeFileSync(join(outside, 'precious'), 'keep me');
    mkdirSync(join(outside, 'dir'));
    writeFileSync(join(outside, 'dir', 'inner'), 'keep me too');
    const guard = newGuard();
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.git', why: WHY_GIT }], onNotice);

    mkdirSync(join(ws, 'staging', 'a', 'b'), { recursive: true });
    writeFileSync(join(ws, 'staging', 'a', 'b', 'file'), 'x');
    symlinkSync(join(outside, 'precious'), join(ws, 'staging', 'link-to-file'));
    symlinkSync(join(outside, 'dir'), join(ws, 'staging', 'a', 'link-to-dir'));
    renameSync(join(ws, 'staging'), join(ws, '.git'));

    const path = join(ws, '.git');
    await waitFor(() => notices.length === 1, 'the notice');
    expect(exists(path)).toBe(false);
    expect(notices[0]).toEqual({
      kind: 'protected_path_undone',
      path,
      message: removedMessage(path, WHY_GIT),
    });
    expect(readFileSync(join(outside, 'precious'), 'utf8')).toBe('keep me');
    expect(readFileSync(join(outside, 'dir', 'inner'), 'utf8')).toBe('keep me too');
    await watch.stop();
    await guard.close();
  });

  const shmQuarantineUsable = existsSync('/dev/shm') && statSync('/dev/shm').dev !== statSync(tmpdir()).dev;
  it.skipIf(!shmQuarantineUsable)(
    'a quarantine on another file system (/dev/shm, the workspace under the temp dir): the entry is removed',
    async () => {
      const ws = tempDir('ux-guard-ws-');
      const shm = mkdtempSync('/dev/shm/ux-guard-q-');
      onTestFinished(() => rmSync(shm, { recursive: true, force: true }));
      const quarantine = join(shm, 'q');
      const guard = newGuard({ quarantineDir: quarantine });
      const { notices, onNotice } = collector();
      const watch = await guard.watch([{ dir: ws, name: '.git', why: WHY_GIT }], onNotice);

      mkdirSync(join(ws, 'staging'));
      writeFileSync(join(ws, 'staging', 'config'), 'x');
      renameSync(join(ws, 'staging'), join(ws, '.git'));
      const path = join(ws, '.git');
      await waitFor(() => notices.length === 1, 'the notice');
      expect(exists(path)).toBe(false);
      expect(notices[0]).toEqual({
        kind: 'protected_path_undone',
        path,
        message: removedMessage(path, WHY_GIT),
      });
      expect(quarantineEntries(quarantine)).toEqual([]);
      await watch.stop();
      await guard.close();
    },
  );

  it('a quarantine path that a command redirected with a symlink before its first use is not followed', async () => {
    const ws = tempDir('ux-guard-ws-');
    const base = tempDir('ux-guard-q-');
    const elsewhere = tempDir('ux-guard-elsewhere-');
    const quarantine = join(base, 'ux', 'quarantine');
    const guard = newGuard({ quarantineDir: quarantine });
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.git', why: WHY_GIT }], onNotice);
    // After the guard started, before the quarantine is first needed.
    symlinkSync(elsewhere, join(base, 'ux'));

    writeFileSync(join(ws, '.git'), 'x');
    await waitFor(() => notices.length === 1, 'the notice');
    expect(exists(join(ws, '.git'))).toBe(false);
    expect(notices[0]?.movedTo).toBeUndefined();
    expect(notices[0]?.message).toBe(removedMessage(join(ws, '.git'), WHY_GIT));
    expect(readdirSync(elsewhere)).toEqual([]);
    await watch.stop();
    await guard.close();
  });

  it('a quarantine removed while the guard runs is made again', async () => {
    const ws = tempDir('ux-guard-ws-');
    const quarantine = join(tempDir('ux-guard-q-'), 'q');
    const guard = newGuard({ quarantineDir: quarantine });
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.codex', why: WHY_CODEX }], onNotice);
    writeFileSync(join(ws, '.codex'), 'first');
    await waitFor(() => notices.length === 1, 'the first notice');
    rmSync(quarantine, { recursive: true });
    writeFileSync(join(ws, '.codex'), 'second');
    await waitFor(() => !exists(join(ws, '.codex')), 'the second .codex to be taken away');
    await watch.stop();
    // Said once per path and command: the second one is in the quarantine, not in a second notice.
    expect(notices).toHaveLength(1);
    const entries = quarantineEntries(quarantine);
    expect(entries).toHaveLength(1);
    expect(readFileSync(join(quarantine, entries[0]!), 'utf8')).toBe('second');
    await guard.close();
  });

  it('names that are not targets are left alone', async () => {
    const ws = tempDir('ux-guard-ws-');
    const quarantine = join(tempDir('ux-guard-q-'), 'q');
    const guard = newGuard({ quarantineDir: quarantine });
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.git', why: WHY_GIT }], onNotice);

    const others = ['.git2', 'git', '.gi', '.GIT', '.git.lock', 'x.git'];
    for (const name of others) writeFileSync(join(ws, name), name);
    mkdirSync(join(ws, 'sub'));
    writeFileSync(join(ws, 'sub', '.git'), 'deeper: not a target');
    // Events are handled in order: once this one is done, the ones above were seen.
    writeFileSync(join(ws, '.git'), 'barrier');
    await waitFor(() => notices.length === 1, 'the notice of the barrier');

    for (const name of others) expect(readFileSync(join(ws, name), 'utf8')).toBe(name);
    expect(readFileSync(join(ws, 'sub', '.git'), 'utf8')).toBe('deeper: not a target');
    expect(quarantineEntries(quarantine)).toHaveLength(1);
    await watch.stop();
    expect(notices).toHaveLength(1);
    await guard.close();
  });

  it('two watches on the same name both hear of it; one move happens', async () => {
    const ws = tempDir('ux-guard-ws-');
    const quarantine = join(tempDir('ux-guard-q-'), 'q');
    const guard = newGuard({ quarantineDir: quarantine });
    const first = collector();
    const second = collector();
    const watchA = await guard.watch([{ dir: ws, name: '.codex', why: 'first command' }], first.onNotice);
    const watchB = await guard.watch(
      [
        { dir: ws, name: '.agents', why: 'second command' },
        { dir: ws, name: '.codex', why: 'second command' },
      ],
      second.onNotice,
    );

    const path = join(ws, '.codex');
    writeFileSync(path, 'x');
    await waitFor(() => first.notices.length === 1 && second.notices.length === 1, 'both notices');
    expect(exists(path)).toBe(false);
    expect(first.notices[0]?.movedTo).toBe(second.notices[0]?.movedTo);
    expect(first.notices[0]?.message).toBe(
      movedMessage(path, 'first command', first.notices[0]?.movedTo ?? ''),
    );
    expect(second.notices[0]?.message).toBe(
      movedMessage(path, 'second command', second.notices[0]?.movedTo ?? ''),
    );
    expect(quarantineEntries(quarantine)).toHaveLength(1);

    // The first command ends; the directory is still watched for the second.
    await watchA.stop();
    writeFileSync(join(ws, '.codex'), 'again');
    await waitFor(() => !exists(join(ws, '.codex')), 'the second .codex to be taken away');
    await watchB.stop();
    // Each command heard of the path once.
    expect(first.notices).toHaveLength(1);
    expect(second.notices).toHaveLength(1);
    expect(quarantineEntries(quarantine)).toHaveLength(2);

    // Nobody watches any more: the name may be created.
    writeFileSync(join(ws, '.codex'), 'made outside the sandbox');
    await settled(guard);
    expect(readFileSync(join(ws, '.codex'), 'utf8')).toBe('made outside the sandbox');
    await guard.close();
  });

  it('stop() takes away and reports an entry created just before it, before it resolves', async () => {
    const ws = tempDir('ux-guard-ws-');
    const quarantine = join(tempDir('ux-guard-q-'), 'q');
    const guard = newGuard({ quarantineDir: quarantine });
    for (let round = 0; round < 20; round++) {
      const { notices, onNotice } = collector();
      const watch = await guard.watch([{ dir: ws, name: '.git', why: WHY_GIT }], onNotice);
      const path = join(ws, '.git');
      // The event races the U record; either way the entry is gone and reported when stop() resolves.
      if (round % 2 === 0) writeFileSync(path, `round ${round}`);
      else mkdirSync(path);
      await watch.stop();
      expect(exists(path)).toBe(false);
      expect(notices).toHaveLength(1);
      expect(notices[0]?.path).toBe(path);
    }
    expect(quarantineEntries(quarantine)).toHaveLength(20);
    await guard.close();
  });

  it('stop() checks every target once more: an entry no event told of is taken too', async () => {
    const ws = tempDir('ux-guard-ws-');
    const guard = newGuard();
    const { notices, onNotice } = collector();
    // Made before the watch began, so no event will come (nor is it swept when the watch starts).
    writeFileSync(join(ws, '.ux'), 'no event for this one');
    const watch = await guard.watch([{ dir: ws, name: '.ux', why: 'ux state' }], onNotice);
    await settled(guard);
    expect(exists(join(ws, '.ux'))).toBe(true);
    expect(notices).toEqual([]);
    await watch.stop();
    expect(exists(join(ws, '.ux'))).toBe(false);
    expect(notices).toEqual([
      {
        kind: 'protected_path_undone',
        path: join(ws, '.ux'),
        message: removedMessage(join(ws, '.ux'), 'ux state'),
      },
    ]);
    await guard.close();
  });

  it('stop() is idempotent', async () => {
    const ws = tempDir('ux-guard-ws-');
    const guard = newGuard();
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.git', why: WHY_GIT }], onNotice);
    const first = watch.stop();
    const second = watch.stop();
    await Promise.all([first, second]);
    await watch.stop();
    // Stopped means stopped: the name may now be created.
    writeFileSync(join(ws, '.git'), 'x');
    await settled(guard);
    expect(exists(join(ws, '.git'))).toBe(true);
    expect(notices).toEqual([]);
    // A watch with no target starts nothing and stops at once.
    const empty = await createPathGuard({ binaryPath: '/nonexistent' }).watch([], onNotice);
    await empty.stop();
    await guard.close();
  });

  it('a directory that does not exist rejects with a SandboxUnavailableError naming it; the guard keeps working', async () => {
    const ws = tempDir('ux-guard-ws-');
    const missing = join(ws, 'no-such-dir');
    const guard = newGuard();
    const { notices, onNotice } = collector();
    const error = await guard
      .watch(
        [
          { dir: ws, name: '.codex', why: WHY_CODEX },
          { dir: missing, name: '.git', why: WHY_GIT },
        ],
        onNotice,
      )
      .then(
        () => undefined,
        (reason: unknown) => reason,
      );
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as SandboxUnavailableError).backend).toBe('bwrap');
    expect((error as SandboxUnavailableError).reason).toBe(
      `cannot watch ${missing}: No such file or directory`,
    );
    // The failed registration was dropped whole: its other target is not watched.
    writeFileSync(join(ws, '.codex'), 'x');
    await settled(guard);
    expect(exists(join(ws, '.codex'))).toBe(true);

    // A bad target is refused before anything is sent: a relative directory, a name with an empty,
    // "." or ".." component (a chain is a relative path of names), a kept link of several names.
    const badTarget = /relative path of at most 32 names \(one for a kept link\) in an absolute directory/;
    await expect(guard.watch([{ dir: 'relative', name: '.git', why: WHY_GIT }], onNotice)).rejects.toThrow(
      badTarget,
    );
    for (const name of ['a//b', 'a/../b', './a', 'a/', '/a'])
      await expect(guard.watch([{ dir: ws, name, why: WHY_GIT }], onNotice)).rejects.toThrow(badTarget);
    await expect(guard.watch([{ dir: ws, name: 'a/b', link: 'x', why: WHY_GIT }], onNotice)).rejects.toThrow(
      badTarget,
    );
    const tooLong = Array.from({ length: 33 }, (_, i) => `d${i}`).join('/');
    await expect(guard.watch([{ dir: ws, name: tooLong, why: WHY_GIT }], onNotice)).rejects.toThrow(
      badTarget,
    );

    const watch = await guard.watch([{ dir: ws, name: '.git', why: WHY_GIT }], onNotice);
    writeFileSync(join(ws, '.git'), 'x');
    await waitFor(() => notices.length === 1, 'the notice');
    await watch.stop();
    await guard.close();
  });

  it('terminal signals sent to the guard do not stop it', async () => {
    const ws = tempDir('ux-guard-ws-');
    const guard = newGuard();
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.git', why: WHY_GIT }], onNotice);
    const pid = guard.pid!;
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGPIPE'] as const)
      process.kill(pid, signal);
    // It has run since the signals came (they are delivered before it runs again) and still works.
    await settled(guard);
    expect(isAlive(pid)).toBe(true);
    expect(guard.pid).toBe(pid);
    writeFileSync(join(ws, '.git'), 'x');
    await waitFor(() => notices.length === 1 && !exists(join(ws, '.git')), 'the .git to be taken away');
    await watch.stop();
    await guard.close();
  });

  it('events lost to an overflowing inotify queue: every target is checked', async () => {
    const ws = tempDir('ux-guard-ws-');
    const noise = join(ws, 'noise');
    mkdirSync(noise);
    const guard = newGuard();
    const { notices, onNotice } = collector();
    const watch = await guard.watch(
      [
        { dir: ws, name: '.git', why: WHY_GIT },
        { dir: noise, name: 'never', why: 'unused' },
      ],
      onNotice,
    );
    const pid = guard.pid!;
    const limit = Number(readFileSync('/proc/sys/fs/inotify/max_queued_events', 'utf8'));
    process.kill(pid, 'SIGSTOP');
    try {
      for (let i = 0; i <= limit + 10; i++) closeSync(openSync(join(noise, `f${i}`), 'w'));
      writeFileSync(join(ws, '.git'), 'its event is lost');
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    await waitFor(() => notices.length === 1, 'the notice', 5_000);
    expect(exists(join(ws, '.git'))).toBe(false);
    await watch.stop();
    await guard.close();
  });

  it('the guard going away: live watches hear of it, stop() resolves, the next watch starts a new guard', async () => {
    const ws = tempDir('ux-guard-ws-');
    const guard = newGuard();
    const { notices, onNotice } = collector();
    const watch = await guard.watch(
      [
        { dir: ws, name: '.git', why: WHY_GIT },
        { dir: ws, name: '.codex', why: WHY_CODEX },
      ],
      onNotice,
    );
    const pid = guard.pid!;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => notices.length === 1, 'the notice');
    expect(notices[0]).toMatchObject({
      kind: 'protected_path_undone',
      path: join(ws, '.git'),
      error: GUARD_STOPPED_ERROR,
    });
    expect(notices[0]?.message).toMatch(/path guard was killed by SIGKILL while the command ran/);
    await watch.stop();
    expect(guard.pid).toBeUndefined();

    const again = collector();
    const next = await guard.watch([{ dir: ws, name: '.git', why: WHY_GIT }], again.onNotice);
    expect(guard.pid).not.toBe(pid);
    writeFileSync(join(ws, '.git'), 'x');
    await waitFor(() => again.notices.length === 1, 'the new guard to take it');
    await next.stop();
    expect(notices).toHaveLength(1);
    await guard.close();
  });

  it('a guard that cannot run rejects watch() with a SandboxUnavailableError', async () => {
    const ws = tempDir('ux-guard-ws-');
    const target = [{ dir: ws, name: '.git', why: WHY_GIT }];
    const missing = newGuard({ binaryPath: join(ws, 'no-such-guard') });
    const error = await missing.watch(target, () => {}).catch((reason: unknown) => reason);
    expect(SandboxUnavailableError.isInstance(error)).toBe(true);
    expect((error as SandboxUnavailableError).reason).toMatch(
      /the path guard could not start .*no-such-guard.*ENOENT/,
    );

    // A program that exits at once (it answers nothing).
    const quitter = newGuard({ binaryPath: '/bin/true' });
    await expect(quitter.watch(target, () => {})).rejects.toThrow(/the path guard exited with code 0/);
  });

  it('paths with newlines and spaces travel intact', async () => {
    const base = tempDir('ux-guard-ws-');
    const ws = join(base, 'a dir\nwith a newline');
    mkdirSync(ws);
    const quarantine = join(tempDir('ux-guard-q-'), 'q');
    const guard = newGuard({ quarantineDir: quarantine });
    const { notices, onNotice } = collector();
    const name = '.odd\tname\n';
    const watch = await guard.watch([{ dir: ws, name, why: 'odd' }], onNotice);
    writeFileSync(join(ws, name), 'x');
    await waitFor(() => notices.length === 1, 'the notice');
    expect(notices[0]?.path).toBe(join(ws, name));
    expect(readFileSync(notices[0]?.movedTo ?? '', 'utf8')).toBe('x');
    // The message is one line for people and models: the path's control characters as escapes.
    expect(notices[0]?.message).toMatch(
      /^the command created \/\S*\/a dir\\nwith a newline\/\.odd\\tname\\n \(odd\); .* ux moved it to \/\S+\\n\. /,
    );
    expect(notices[0]?.message).not.toMatch(/[\t\n]/);
    // One entry is one line in the log: tabs and newlines are escaped.
    const log = readFileSync(join(quarantine, 'quarantine.log'), 'utf8');
    expect(log.split('\n')).toHaveLength(2);
    expect(log).toContain('\\n');
    await watch.stop();
    await guard.close();
  });

  it('close() ends an idle guard at once and it removes the remove-on-exit directories', async () => {
    const ws = tempDir('ux-guard-ws-');
    const outside = tempDir('ux-guard-outside-');
    writeFileSync(join(outside, 'precious'), 'keep me');
    const scratch = join(tempDir('ux-guard-host-'), 'scratch');
    mkdirSync(join(scratch, 'deep'), { recursive: true });
    symlinkSync(outside, join(scratch, 'deep', 'link'));
    const guard = newGuard({ removeOnExit: [scratch] });
    const watch = await guard.watch([{ dir: ws, name: '.git', why: WHY_GIT }], () => {});
    const pid = guard.pid!;
    await watch.stop();
    // No linger, since nothing was watched: it is gone while a guard whose input ended just after it,
    // with a watch live, still lingers its second (no wall-clock bound a loaded machine could break).
    const lingering = await lingeringGuard();
    const closed = guard.close();
    lingering.child.stdin?.end();
    await closed;
    expect(lingering.child.exitCode).toBeNull();
    expect(() => process.kill(pid, 0)).toThrow();
    expect(guard.pid).toBeUndefined();
    expect(exists(scratch)).toBe(false);
    expect(readFileSync(join(outside, 'precious'), 'utf8')).toBe('keep me');
  });
});

/**
 * A raw guard with a live watch, ready: when its input ends it lingers a second before it exits (the
 * yardstick the "at once" tests measure against instead of the clock).
 */
async function lingeringGuard(): Promise<ReturnType<typeof startRawGuard>> {
  const guard = startRawGuard([]);
  guard.send('W', '9', tempDir('ux-guard-linger-'), '.git');
  guard.send('G', '9');
  await waitFor(() => guard.output().join('|').startsWith('R|9|'), 'R 9');
  return guard;
}

/** The guard started by hand, as a host would, with its replies collected. */
function startRawGuard(args: string[]): {
  child: ChildProcess;
  output: () => string[];
  send: (...fields: string[]) => void;
  exited: Promise<number | null>;
} {
  const child = spawn(guardBinary, args, { detached: true, stdio: ['pipe', 'pipe', 'ignore'] });
  const chunks: Buffer[] = [];
  child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return {
    child,
    output: () => Buffer.concat(chunks).toString('utf8').split('\0'),
    send: (...fields) => child.stdin?.write(fields.map((field) => `${field}\0`).join('')),
    exited,
  };
}

describe('ux-path-guard when its host goes away', () => {
  it('with watches live, it keeps taking targets away for a second, checks them, then cleans up and exits', async () => {
    const ws = tempDir('ux-guard-ws-');
    const quarantine = join(tempDir('ux-guard-q-'), 'q');
    const scratch = join(tempDir('ux-guard-host-'), 'scratch');
    mkdirSync(scratch);
    writeFileSync(join(scratch, 'seccomp.bpf'), 'x');
    const guard = startRawGuard(['--quarantine', quarantine, '--remove-on-exit', scratch]);
    guard.send('W', '7', ws, '.git');
    guard.send('W', '7', ws, '.codex');
    guard.send('G', '7');
    await waitFor(() => guard.output().join('|').startsWith('R|7|'), 'R 7');

    // The host dies (its end of the pipe closes) while the command still runs.
    guard.child.stdin?.end();
    await new Promise((resolve) => setTimeout(resolve, 200));
    writeFileSync(join(ws, '.git'), 'made after the host died');
    await waitFor(() => !exists(join(ws, '.git')), 'the .git to be taken away during the linger');

    expect(await guard.exited).toBe(0);
    expect(exists(scratch)).toBe(false);
    const moved = quarantineEntries(quarantine);
    expect(moved).toHaveLength(1);
    expect(readFileSync(join(quarantine, moved[0]!), 'utf8')).toBe('made after the host died');
    const out = guard.output();
    expect(out.slice(0, 6)).toEqual(['R', '7', 'Q', '7', join(ws, '.git'), join(quarantine, moved[0]!)]);
  });

  it('with nothing watched, end of input makes it clean up and exit at once', async () => {
    const outside = tempDir('ux-guard-outside-');
    writeFileSync(join(outside, 'precious'), 'keep me');
    const host = tempDir('ux-guard-host-');
    const scratchA = join(host, 'a');
    const scratchB = join(host, 'b');
    mkdirSync(join(scratchA, 'x', 'y'), { recursive: true });
    symlinkSync(outside, join(scratchA, 'x', 'link'));
    symlinkSync(join(outside, 'precious'), join(scratchA, 'file-link'));
    mkdirSync(scratchB);
    const ws = tempDir('ux-guard-ws-');
    const guard = startRawGuard(['--remove-on-exit', scratchA, '--remove-on-exit', scratchB]);
    // A registration that ended is not live.
    guard.send('W', '1', ws, '.git');
    guard.send('G', '1');
    guard.send('U', '1');
    await waitFor(() => guard.output().join('|') === 'R|1|D|1|', 'R 1 then D 1');
    // At once: it has exited while a guard whose input ended just after, with a watch live, lingers.
    const lingering = await lingeringGuard();
    guard.child.stdin?.end();
    lingering.child.stdin?.end();
    expect(await guard.exited).toBe(0);
    expect(lingering.child.exitCode).toBeNull();
    expect(await lingering.exited).toBe(0);
    expect(exists(scratchA)).toBe(false);
    expect(exists(scratchB)).toBe(false);
    expect(readFileSync(join(outside, 'precious'), 'utf8')).toBe('keep me');
    expect(exists(host)).toBe(true);
  });
});

describe('ux-sandbox-exec', () => {
  const statusLines = "grep -E '^Sig(Ign|Blk)' /proc/self/status";
  /** Whether signal `signal` is in the set `field` (SigIgn, SigBlk) of a status printout. */
  const inSet = (status: string, field: string, signal: number): boolean => {
    const hex = new RegExp(`^${field}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1] ?? '0';
    return ((BigInt(`0x${hex}`) >> BigInt(signal - 1)) & 1n) === 1n;
  };

  it('gives the command default dispositions although its parent ignored SIGINT and SIGTERM', () => {
    const run = (shim: boolean) =>
      execFileSync(
        'bash',
        ['-c', `trap '' INT TERM; exec ${shim ? '"$0" ' : ''}bash -c "$1"`, execShim, statusLines],
        { encoding: 'utf8' },
      );
    // Without the shim, the ignored signals reach the command: the test can tell.
    const without = run(false);
    expect(inSet(without, 'SigIgn', 2) && inSet(without, 'SigIgn', 15)).toBe(true);
    expect(run(true)).toBe('SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n');
  });

  it('gives the command an empty signal mask and default dispositions for every signal', () => {
    const perl = (shim: boolean) =>
      execFileSync(
        'perl',
        [
          '-MPOSIX',
          '-e',
          '$SIG{$_} = "IGNORE" for qw(INT QUIT TERM HUP USR2 PIPE); sigprocmask(SIG_BLOCK, POSIX::SigSet->new(SIGUSR1, SIGCHLD)) or die; exec @ARGV or die',
          ...(shim ? [execShim] : []),
          'bash',
          '-c',
          statusLines,
        ],
        { encoding: 'utf8' },
      );
    const without = perl(false);
    expect(inSet(without, 'SigBlk', 10) && inSet(without, 'SigIgn', 12)).toBe(true); // SIGUSR1, SIGUSR2
    expect(perl(true)).toBe('SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n');
  });

  it('passes the arguments as they are, argv[0] being the program', () => {
    const out = execFileSync(execShim, ['bash', '-c', 'printf "%s|" "$0" "$@"', 'zero', 'a b', '', '-c'], {
      encoding: 'utf8',
    });
    expect(out).toBe('zero|a b||-c|');
    expect(execFileSync(execShim, ['sh', '-c', 'echo "$0"'], { encoding: 'utf8' })).toBe('sh\n');
  });

  it('says why it cannot run a program: 127 when not found, 126 when not runnable, usage without one', () => {
    const missing = spawnSync(execShim, ['no-such-program-ux'], { encoding: 'utf8' });
    expect(missing.status).toBe(127);
    expect(missing.stderr).toBe('ux: cannot run no-such-program-ux: No such file or directory\n');

    const dir = tempDir('ux-exec-');
    writeFileSync(join(dir, 'not-executable'), 'echo hi\n', { mode: 0o644 });
    const denied = spawnSync(execShim, [join(dir, 'not-executable')], { encoding: 'utf8' });
    expect(denied.status).toBe(126);
    expect(denied.stderr).toBe(`ux: cannot run ${join(dir, 'not-executable')}: Permission denied\n`);

    const none = spawnSync(execShim, [], { encoding: 'utf8' });
    expect(none.status).toBe(127);
    expect(none.stderr).toMatch(/^usage: ux-sandbox-exec <program> \[args\.\.\.\]\n$/);
  });

  it('is found where the build puts it', () => {
    expect(nativeBinaryPath('ux-sandbox-exec')).toBe(join(packageRoot, 'native', 'build', 'ux-sandbox-exec'));
    expect(nativeBinaryPath('ux-path-guard')).toBe(join(packageRoot, 'native', 'build', 'ux-path-guard'));
  });
});
