// The quarantine seals what it takes and stays bounded: the native ux-path-guard for real, a writer in a
// real bubblewrap sandbox (no capabilities, as a command runs) whose working directory is inside what
// the guard takes, and floods of protected names.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import {
  builtGuard,
  collector,
  exists,
  newGuard,
  plant,
  quarantineEntries,
  treeOf,
  waitFor,
} from '../test/guard-test-helpers.js';
import { findBwrap } from './find-bwrap.js';

useLeakCheck();

let guardBinary: string;
let bwrap: string;

beforeAll(() => {
  guardBinary = builtGuard();
  const found = findBwrap({ path: process.env.PATH ?? '/usr/bin:/bin' });
  if ('reason' in found) throw new Error(`these tests need bubblewrap: ${found.reason}`);
  bwrap = found.path;
});

/**
 * A sandboxed writer (bubblewrap, user namespace, no capabilities; only `ws` writable): it makes a
 * directory, goes into it, renames it to `name` from inside, then creates files in its working
 * directory as fast as a shell can, counting its attempts in `ws/progress`.
 */
function startWriter(ws: string, name: string): { child: ChildProcess; progress: () => number } {
  const script = `mkdir x && cd x && : > before && mv ../x ../${name} || exit 9
i=0; while :; do i=$((i+1)); : > f$i 2>/dev/null; echo $i > "$WS/progress"; done`;
  const child = spawn(
    bwrap,
    [
      '--ro-bind',
      '/',
      '/',
      '--dev',
      '/dev',
      '--proc',
      '/proc',
      '--bind',
      ws,
      ws,
      '--unshare-user',
      '--unshare-pid',
      '--die-with-parent',
      '--cap-drop',
      'ALL',
      '--chdir',
      ws,
      '--setenv',
      'WS',
      ws,
      '/bin/bash',
      '-c',
      script,
    ],
    { stdio: 'ignore', detached: true },
  );
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(-child.pid!, 'SIGKILL');
      await new Promise((resolve) => child.on('close', resolve));
    }
  });
  const progress = () => {
    try {
      return Number(readFileSync(join(ws, 'progress'), 'utf8').trim()) || 0;
    } catch {
      return 0;
    }
  };
  return { child, progress };
}

describe('the quarantine seals what it takes', () => {
  it('control: a directory renamed away with a writer inside keeps receiving files where it went', async () => {
    const ws = tempDir('ux-seal-ws-');
    const elsewhere = tempDir('ux-seal-elsewhere-');
    const writer = startWriter(ws, '.not-guarded');
    await waitFor(() => exists(join(ws, '.not-guarded')), 'the writer to make its directory');
    // What a plain move into a quarantine does (the guard before sealing).
    renameSync(join(ws, '.not-guarded'), join(elsewhere, 'moved'));
    const at = writer.progress();
    await waitFor(() => writer.progress() > at + 500, 'the writer to go on');
    expect(treeOf(join(elsewhere, 'moved')).filter((name) => name.startsWith('f')).length).toBeGreaterThan(
      100,
    );
  });

  it('a writer whose working directory is inside a taken .ux adds nothing to the quarantine once it is sealed', async () => {
    const ws = tempDir('ux-seal-ws-');
    const quarantine = join(tempDir('ux-seal-q-'), 'quarantine');
    const guard = newGuard({ binaryPath: guardBinary, quarantineDir: quarantine });
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.ux', why: 'ux state' }], onNotice);

    const writer = startWriter(ws, '.ux');
    await waitFor(() => notices.length === 1, 'the notice');
    expect(exists(join(ws, '.ux'))).toBe(false);
    const movedTo = notices[0]?.movedTo ?? '';
    expect(movedTo.startsWith(`${quarantine}/`)).toBe(true);
    const sealed = treeOf(quarantine);

    // The writer goes on (it counts its attempts outside), long after the seal.
    const at = writer.progress();
    await waitFor(() => writer.progress() > at + 2000, 'the writer to go on');
    expect(writer.child.exitCode).toBeNull();
    expect(treeOf(quarantine)).toEqual(sealed);
    // Nothing staged is left, and the entry holds what was there when it was taken.
    expect(sealed.filter((name) => name.startsWith('.incoming-'))).toEqual([]);
    expect(treeOf(movedTo)).toContain('before');
    await watch.stop();
    expect(treeOf(quarantine)).toEqual(sealed);
    expect(notices).toHaveLength(1);
  });

  it('what a command writes into a file as it makes it is kept; what it writes after the seal is not', async () => {
    const ws = tempDir('ux-seal-ws-');
    const quarantine = join(tempDir('ux-seal-q-'), 'quarantine');
    const guard = newGuard({ binaryPath: guardBinary, quarantineDir: quarantine });
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.codex', why: 'agent configuration' }], onNotice);
    const fd = openSync(join(ws, '.codex'), 'w');
    onTestFinished(() => closeSync(fd));
    writeSync(fd, 'early\n'); // taken at its creation already, written through the descriptor
    await waitFor(() => notices.length === 1, 'the notice (it comes once the entry is sealed)');
    writeSync(fd, 'late\n');
    await watch.stop();
    expect(readFileSync(notices[0]?.movedTo ?? '', 'utf8')).toBe('early\n');
    expect(treeOf(quarantine).filter((name) => name.startsWith('.incoming-'))).toEqual([]);
  });

  it('what it keeps are copies: new files, never executable; links recreated, not followed; FIFOs left out', async () => {
    const ws = tempDir('ux-seal-ws-');
    const outside = tempDir('ux-seal-outside-');
    writeFileSync(join(outside, 'secret'), 'not to be copied');
    const quarantine = join(tempDir('ux-seal-q-'), 'quarantine');
    const guard = newGuard({ binaryPath: guardBinary, quarantineDir: quarantine });
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.agents', why: 'agent skills' }], onNotice);

    const draft = join(ws, 'draft');
    mkdirSync(join(draft, 'hooks'), { recursive: true });
    writeFileSync(join(draft, 'hooks', 'run'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    symlinkSync(join(outside, 'secret'), join(draft, 'link'));
    execFileSync('mkfifo', [join(draft, 'fifo')]);
    const inode = statSync(join(draft, 'hooks', 'run')).ino;
    renameSync(draft, join(ws, '.agents'));
    await waitFor(() => notices.length === 1, 'the notice');
    const entry = notices[0]?.movedTo ?? '';

    expect(treeOf(entry)).toEqual(['hooks', 'hooks/run', 'link']);
    const run = statSync(join(entry, 'hooks', 'run'));
    expect(run.ino).not.toBe(inode);
    expect(run.mode & 0o777).toBe(0o600);
    expect(readFileSync(join(entry, 'hooks', 'run'), 'utf8')).toBe('#!/bin/sh\necho hi\n');
    expect(lstatSync(join(entry, 'link')).isSymbolicLink()).toBe(true);
    expect(readlinkSync(join(entry, 'link'))).toBe(join(outside, 'secret'));
    const log = readFileSync(join(quarantine, 'quarantine.log'), 'utf8');
    expect(log).toContain(
      '\tsealed copy: 1 entries left out (not a file, directory or link, or over a bound)\n',
    );
    await watch.stop();
  });
});

describe('the quarantine is bounded', () => {
  it('a name made 300 times leaves at most 64 entries, and the excess is reported once', async () => {
    const ws = tempDir('ux-bound-ws-');
    const quarantine = join(tempDir('ux-bound-q-'), 'quarantine');
    const guard = newGuard({ binaryPath: guardBinary, quarantineDir: quarantine });
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.codex', why: 'agent configuration' }], onNotice);
    const path = join(ws, '.codex');
    for (let made = 0; made < 300; ) {
      try {
        mkdirSync(path);
        made += 1;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 1)); // not taken yet
      }
    }
    await watch.stop();
    expect(quarantineEntries(quarantine)).toHaveLength(64);
    expect(notices.map((notice) => notice.path)).toEqual([path, quarantine]);
    expect(notices[1]?.message).toBe(
      `the quarantine (${quarantine}) keeps at most 64 entries and 64 MiB; to make room for what this command created, ux removed its 236 oldest entries (0 MiB).`,
    );
    // The newest are kept: the log tells what went.
    const log = readFileSync(join(quarantine, 'quarantine.log'), 'utf8');
    expect(log.match(/\tremoved: the quarantine keeps only the newest entries\n/g)).toHaveLength(236);
  });

  it('in bytes too: the oldest go, and a file over the bound is cut', async () => {
    const ws = tempDir('ux-bound-ws-');
    const quarantine = join(tempDir('ux-bound-q-'), 'quarantine');
    const guard = newGuard({
      binaryPath: guardBinary,
      quarantineDir: quarantine,
      quarantineMaxEntries: 10,
      quarantineMaxBytes: 1000,
    });
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.codex', why: 'agent configuration' }], onNotice);
    const path = join(ws, '.codex');
    for (let i = 0; i < 6; i++) {
      plant(path, `${i}`.repeat(300));
      await waitFor(() => !exists(path), 'the .codex to be taken');
    }
    plant(path, 'x'.repeat(5000));
    await waitFor(() => !exists(path), 'the big .codex to be taken');
    await watch.stop();
    const entries = quarantineEntries(quarantine).sort();
    expect(entries).toHaveLength(1);
    expect(readFileSync(join(quarantine, entries[0]!), 'utf8')).toBe('x'.repeat(1000));
    expect(notices).toHaveLength(2);
    expect(notices[1]?.message).toMatch(
      /keeps at most 10 entries and 0\.0 MiB; .* removed its 6 oldest entries/,
    );
    expect(readFileSync(join(quarantine, 'quarantine.log'), 'utf8')).toContain(
      'sealed copy: cut at the size bound',
    );
  });

  it('entries an older guard left unsealed are removed through descriptors when they are the oldest', async () => {
    const ws = tempDir('ux-bound-ws-');
    const outside = tempDir('ux-bound-outside-');
    writeFileSync(join(outside, 'precious'), 'keep me');
    const quarantine = join(tempDir('ux-bound-q-'), 'quarantine');
    mkdirSync(join(quarantine, '20000101T000000Z-1-1-.ux', 'deep'), { recursive: true });
    symlinkSync(outside, join(quarantine, '20000101T000000Z-1-1-.ux', 'deep', 'link'));
    chmodSync(join(quarantine, '20000101T000000Z-1-1-.ux'), 0o500);
    const guard = newGuard({ binaryPath: guardBinary, quarantineDir: quarantine, quarantineMaxEntries: 1 });
    const { notices, onNotice } = collector();
    const watch = await guard.watch([{ dir: ws, name: '.ux', why: 'ux state' }], onNotice);
    plant(join(ws, '.ux'), 'new');
    await waitFor(() => notices.length === 1, 'the notice');
    await watch.stop();
    expect(quarantineEntries(quarantine)).toHaveLength(1);
    expect(readFileSync(notices[0]?.movedTo ?? '', 'utf8')).toBe('new');
    expect(readFileSync(join(outside, 'precious'), 'utf8')).toBe('keep me');
    expect(notices[1]?.message).toMatch(/removed its 1 oldest entry \(0 MiB\)/);
  });
});
