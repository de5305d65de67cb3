import { execFile } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { snapshotWatchedFiles } from './capture-shell-snapshot.js';
import {
  type CachedShellSnapshot,
  fileIdentity,
  ShellSnapshotCache,
  type ShellSnapshotCacheKeyInput,
  shellSnapshotCacheKey,
} from './shell-snapshot-cache.js';

const isRoot = process.getuid?.() === 0;

/** A home with a .bash_profile that sources .bashrc, which sources an aliases file. */
function setUp() {
  const root = tempDir('ux-snapcache-');
  const home = join(root, 'home');
  mkdirSync(home);
  writeFileSync(join(home, '.bash_profile'), '. ~/.bashrc\n');
  writeFileSync(join(home, '.bashrc'), '[ -f "$HOME/.aliases" ] && . "$HOME/.aliases"\nexport A=1\n');
  writeFileSync(join(home, '.aliases'), 'alias ll="ls -l"\n');
  const env = { HOME: home, PATH: '/usr/bin:/bin', USER: 'me' };
  const input: ShellSnapshotCacheKeyInput = {
    shell: '/bin/bash',
    kind: 'bash',
    env,
    cwd: root,
    context: 'none',
  };
  const cache = new ShellSnapshotCache({ dir: join(root, 'cache') });
  const watched = snapshotWatchedFiles('/bin/bash', 'bash', env, root);
  const entry: CachedShellSnapshot = {
    text: 'export A=1\n',
    stamps: watched.map((path) => [path, fileIdentity(path)]),
    changedVariables: ['A', 'PATH'],
    startValues: { A: null, PATH: '/usr/bin:/bin' },
    diagnostics: 'rc: bonjour — ✓',
    capturedAt: 1,
  };
  return { root, home, env, input, cache, entry, watched };
}

/** A change of mtime that is certainly visible (some file systems keep seconds only). */
function bump(path: string, text: string): void {
  writeFileSync(path, text);
  const later = new Date(Date.now() + 5000);
  utimesSync(path, later, later);
}

describe('shellSnapshotCacheKey', () => {
  it('changes with the shell, the cwd, the context and the variables a login shell reads, not with others', () => {
    const { input } = setUp();
    const base = shellSnapshotCacheKey(input).name;
    expect(shellSnapshotCacheKey({ ...input }).name).toBe(base);
    expect(shellSnapshotCacheKey({ ...input, shell: '/usr/bin/bash' }).name).not.toBe(base);
    expect(shellSnapshotCacheKey({ ...input, cwd: '/elsewhere' }).name).not.toBe(base);
    expect(shellSnapshotCacheKey({ ...input, context: 'bwrap' }).name).not.toBe(base);
    for (const [name, value] of [
      ['HOME', '/other'],
      ['PATH', '/bin'],
      ['LANG', 'C.UTF-8'],
      ['LC_ALL', 'C'],
      ['ZDOTDIR', '/z'],
      ['BASH_ENV', '/b'],
      ['XDG_CONFIG_HOME', '/x'],
    ])
      expect(shellSnapshotCacheKey({ ...input, env: { ...input.env, [name!]: value! } }).name, name).not.toBe(
        base,
      );
    // A variable no login shell is known to read (a terminal's window id) does not split the cache.
    expect(shellSnapshotCacheKey({ ...input, env: { ...input.env, WINDOWID: '42' } }).name).toBe(base);
  });
});

describe('snapshotWatchedFiles', () => {
  it('lists the login files, what they source by a literal path, and the shell binary', () => {
    const { watched, home } = setUp();
    expect(watched).toEqual(
      expect.arrayContaining([join(home, '.bash_profile'), join(home, '.bashrc'), join(home, '.aliases')]),
    );
    expect(watched.at(-1)).toMatch(/bash$/);
  });
});

describe('ShellSnapshotCache', () => {
  it('gives back what was stored, byte for byte, while nothing changed', () => {
    const { cache, input, env, entry } = setUp();
    const key = shellSnapshotCacheKey(input);
    expect(cache.lookup(key, env)).toEqual({ hit: false, reason: 'absent' });
    expect(cache.store(key, { ...entry, text: "export B=$'\\xe9'\n\xe9\n" })).toBeUndefined();
    const found = cache.lookup(key, env);
    expect(found.hit).toBe(true);
    if (!found.hit) return;
    expect(found.entry.text).toBe("export B=$'\\xe9'\n\xe9\n");
    expect(found.entry.diagnostics).toBe('rc: bonjour — ✓');
    expect(found.entry.changedVariables).toEqual(['A', 'PATH']);
    const stat = statSync(join(cache.dir, `${key.name}.snap`));
    expect(stat.mode & 0o777).toBe(0o600);
    expect(statSync(cache.dir).mode & 0o777).toBe(0o700);
  });

  it('is stale once a login file changes', () => {
    const { cache, input, env, entry, home } = setUp();
    const key = shellSnapshotCacheKey(input);
    cache.store(key, entry);
    bump(join(home, '.bashrc'), 'export A=2\n');
    expect(cache.lookup(key, env)).toEqual({ hit: false, reason: `stale: ${join(home, '.bashrc')} changed` });
  });

  it('is stale once a file a login file sources changes, or a missing login file appears', () => {
    const { cache, input, env, entry, home } = setUp();
    const key = shellSnapshotCacheKey(input);
    cache.store(key, entry);
    bump(join(home, '.aliases'), 'alias ll="ls -la"\n');
    expect(cache.lookup(key, env)).toEqual({
      hit: false,
      reason: `stale: ${join(home, '.aliases')} changed`,
    });

    const again = setUp();
    const key2 = shellSnapshotCacheKey(again.input);
    again.cache.store(key2, again.entry);
    writeFileSync(join(again.home, '.profile'), 'export P=1\n');
    expect(again.cache.lookup(key2, again.env)).toEqual({
      hit: false,
      reason: `stale: ${join(again.home, '.profile')} changed`,
    });
  });

  it('is stale when a file is replaced by another with the same size and mtime (a new inode)', () => {
    const { cache, input, env, entry, home } = setUp();
    const key = shellSnapshotCacheKey(input);
    cache.store(key, entry);
    const rc = join(home, '.bashrc');
    const before = statSync(rc);
    const replacement = join(home, 'rc.new');
    writeFileSync(replacement, readFileSync(rc, 'utf8').replace('A=1', 'A=2'));
    utimesSync(replacement, before.atime, before.mtime);
    renameSync(replacement, rc);
    expect(cache.lookup(key, env).hit).toBe(false);
  });

  it('is stale when a variable the login files changed starts from another value; other variables do not matter', () => {
    const { cache, input, env, entry } = setUp();
    const key = shellSnapshotCacheKey(input);
    cache.store(key, entry);
    expect(cache.lookup(key, { ...env, A: 'set before' })).toEqual({
      hit: false,
      reason: 'stale: A starts from another value',
    });
    expect(cache.lookup(key, { ...env, UNRELATED: 'x' }).hit).toBe(true);
  });

  it('never uses an entry of another key written under this name', () => {
    const { cache, input, env, entry } = setUp();
    const key = shellSnapshotCacheKey(input);
    cache.store({ name: key.name, material: 'something else' }, entry);
    expect(cache.lookup(key, env)).toEqual({
      hit: false,
      reason: `${join(cache.dir, `${key.name}.snap`)} belongs to another key`,
    });
  });

  it('refuses an entry that is a symbolic link, open to others, hard-linked, or not a regular file', () => {
    const { cache, input, env, entry, root } = setUp();
    const key = shellSnapshotCacheKey(input);
    cache.store(key, entry);
    const file = join(cache.dir, `${key.name}.snap`);
    const planted = join(root, 'planted.snap');
    renameSync(file, planted);
    symlinkSync(planted, file);
    expect(cache.lookup(key, env)).toEqual({ hit: false, reason: `${file} is a symbolic link: refused` });

    renameSync(planted, `${file}.x`);
    renameSync(`${file}.x`, file);
    expect(cache.lookup(key, env).hit).toBe(true);
    chmodSync(file, 0o644);
    expect(cache.lookup(key, env)).toEqual({ hit: false, reason: `${file} is open to others: refused` });
    chmodSync(file, 0o600);
    linkSync(file, join(cache.dir, 'second-name'));
    expect(cache.lookup(key, env)).toEqual({ hit: false, reason: `${file} has other links: refused` });
  });

  it(`refuses an entry another user owns${isRoot ? '' : ' (as root only: others cannot give files away)'}`, () => {
    const { cache, input, env, entry } = setUp();
    const key = shellSnapshotCacheKey(input);
    cache.store(key, entry);
    const file = join(cache.dir, `${key.name}.snap`);
    if (isRoot) {
      chownSync(file, 4242, 4242);
      expect(cache.lookup(key, env)).toEqual({
        hit: false,
        reason: `${file} belongs to uid 4242, not 0: refused`,
      });
    } else {
      // The same check, seen from the other side: a cache that expects another owner refuses ours.
      const other = new ShellSnapshotCache({ dir: cache.dir, uid: (process.getuid?.() ?? 0) + 1 });
      expect(other.lookup(key, env).hit).toBe(false);
    }
  });

  it('refuses a cache directory that is a link or belongs to someone else, and stores nothing there', () => {
    const { root, input, env, entry } = setUp();
    const real = join(root, 'real');
    mkdirSync(real, { mode: 0o700 });
    symlinkSync(real, join(root, 'link'));
    const linked = new ShellSnapshotCache({ dir: join(root, 'link') });
    const key = shellSnapshotCacheKey(input);
    expect(linked.store(key, entry)).toBe(`${join(root, 'link')} is a symbolic link: refused`);
    expect(readdirSync(real)).toEqual([]);
    expect(linked.lookup(key, env).hit).toBe(false);
    const foreign = new ShellSnapshotCache({ dir: real, uid: (process.getuid?.() ?? 0) + 1 });
    expect(foreign.store(key, entry)).toMatch(/belongs to uid \d+: refused$/);
  });

  it('keeps at most maxEntries, dropping the least recently used', () => {
    const { root, input, env, entry } = setUp();
    const cache = new ShellSnapshotCache({ dir: join(root, 'small'), maxEntries: 2 });
    const keys = ['a', 'b', 'c'].map((cwd) => shellSnapshotCacheKey({ ...input, cwd: `/${cwd}` }));
    cache.store(keys[0]!, entry);
    cache.store(keys[1]!, entry);
    // The first is used again (and so more recently than the second) before the third arrives.
    const past = new Date(Date.now() - 60_000);
    utimesSync(join(cache.dir, `${keys[1]!.name}.snap`), past, past);
    utimesSync(join(cache.dir, `${keys[0]!.name}.snap`), past, new Date(past.getTime() - 1000));
    expect(cache.lookup(keys[0]!, env).hit).toBe(true);
    cache.store(keys[2]!, entry);
    expect(readdirSync(cache.dir).sort()).toEqual([`${keys[0]!.name}.snap`, `${keys[2]!.name}.snap`].sort());
  });

  it('lets processes that store and read one key at once see only whole entries, and leave no temporary files', async () => {
    const { cache, input, env, entry } = setUp();
    const key = shellSnapshotCacheKey(input);
    // Separate processes (the built package): in one process the synchronous writes could not interleave.
    const dist = new URL('../../dist/index.js', import.meta.url).href;
    const script = `
      const { ShellSnapshotCache } = await import(${JSON.stringify(dist)});
      const [dir, key, env, entry, id] = JSON.parse(process.argv[1]);
      const cache = new ShellSnapshotCache({ dir });
      const body = id + 'x'.repeat(256 * 1024);
      let bad = 0;
      for (let i = 0; i < 40; i++) {
        const problem = cache.store(key, { ...entry, text: body });
        if (problem) bad++;
        const found = cache.lookup(key, env);
        if (!found.hit || !/^[0-9]x{262144}$/.test(found.entry.text)) bad++;
      }
      process.stdout.write(String(bad));
    `;
    const runs = Array.from(
      { length: 4 },
      (_, id) =>
        new Promise<string>((resolve, reject) => {
          execFile(
            process.execPath,
            ['--input-type=module', '-e', script, JSON.stringify([cache.dir, key, env, entry, id])],
            (error, stdout) => (error ? reject(error) : resolve(stdout)),
          );
        }),
    );
    expect(await Promise.all(runs)).toEqual(['0', '0', '0', '0']);
    expect(readdirSync(cache.dir)).toEqual([`${key.name}.snap`]);
    const found = cache.lookup(key, env);
    expect(found.hit && found.entry.text.length).toBe(256 * 1024 + 1);
  });
});
