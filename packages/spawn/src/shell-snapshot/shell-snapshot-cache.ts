import { createHash, randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants as fs,
  fstatSync,
  futimesSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import type { SnapshotShellKind } from './snapshot-shell-kind.js';

/** Bumped when the entry format or what a snapshot file holds changes: older entries are then misses. */
const FORMAT = 'ux-shell-snapshot-cache-v1';
const SUFFIX = '.snap';
export const DEFAULT_SNAPSHOT_CACHE_ENTRIES = 32;
/** A larger entry is neither written nor read (a snapshot is a few KiB to a few hundred). */
export const MAX_SNAPSHOT_CACHE_ENTRY_BYTES = 8 * 1024 * 1024;
/** A temporary file this old was left by a process that died mid-write. */
const STALE_TEMPORARY_MS = 60_000;
const LINKED = 'linked';

/**
 * The variables a login shell's result may depend on, besides the login files: they are part of the
 * key. Anything else the login files read is not known without running them; a variable the login files
 * *changed* is checked too (its starting value is stored with the entry: `PATH=$PATH:…`).
 */
const KEY_VARIABLES = [
  'HOME',
  'USER',
  'LOGNAME',
  'SHELL',
  'PATH',
  'ZDOTDIR',
  'BASH_ENV',
  'ENV',
  'TERM',
  'LANG',
  'LANGUAGE',
  'TMPDIR',
  'HOSTNAME',
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'SSH_CONNECTION',
  'SSH_TTY',
] as const;
const KEY_PREFIXES = ['LC_', 'XDG_'] as const;

export interface ShellSnapshotCacheKeyInput {
  shell: string;
  kind: SnapshotShellKind;
  /** The environment the capture starts from (after the environment policy). */
  env: Record<string, string>;
  /** Where the capture runs (login files may look at it). */
  cwd: string;
  /**
   * What else decides the snapshot's text: the sandbox backend the capture runs in, the names the
   * environment policy keeps out of snapshots. Opaque; equal strings mean equal captures.
   */
  context: string;
}

/** A key: `name` is the entry's file name, `material` what it was hashed from (compared on read). */
export interface ShellSnapshotCacheKey {
  name: string;
  material: string;
}

/** The cache key of a capture (no file system access). */
export function shellSnapshotCacheKey(input: ShellSnapshotCacheKeyInput): ShellSnapshotCacheKey {
  const variables = Object.keys(input.env)
    .filter(
      (name) =>
        (KEY_VARIABLES as readonly string[]).includes(name) ||
        KEY_PREFIXES.some((prefix) => name.startsWith(prefix)),
    )
    .sort()
    .map((name) => [name, input.env[name]]);
  const material = JSON.stringify([FORMAT, input.kind, input.shell, input.cwd, input.context, variables]);
  const name = createHash('sha256').update(material).digest('hex').slice(0, 40);
  return { name, material };
}

/**
 * A file's identity for staleness: device, inode, size, modification and change times (nanoseconds);
 * `-` when it does not exist (or cannot be looked at). A replaced file (new inode), an edit (mtime,
 * size) and a `touch -d` back to the old mtime (ctime) all change it. Follows links: what the shell
 * reads is the target; the link itself is stamped too when the path is a link.
 */
export function fileIdentity(path: string): string {
  try {
    const target = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (!target) return '-';
    const own = `${target.dev}:${target.ino}:${target.size}:${target.mtimeNs}:${target.ctimeNs}`;
    const link = lstatSync(path, { bigint: true });
    return link.isSymbolicLink() ? `${own}@${link.ino}:${link.ctimeNs}` : own;
  } catch {
    return '-';
  }
}

/** What the cache keeps of a capture. */
export interface CachedShellSnapshot {
  /** The snapshot file's text (what `captureShellSnapshot` wrote). */
  text: string;
  /** Every file the capture depended on, with its identity before the capture (`fileIdentity`). */
  stamps: [path: string, identity: string][];
  changedVariables: string[];
  /** The starting value of each changed variable (null: unset) when captured. */
  startValues: Record<string, string | null>;
  diagnostics: string;
  capturedAt: number;
}

export type ShellSnapshotCacheLookup =
  | { hit: true; entry: CachedShellSnapshot }
  | { hit: false; reason: string };

export interface ShellSnapshotCacheOptions {
  /** The cache's directory: made 0700 when missing; refused when a link, not ours, or open to others. */
  dir: string;
  /** Default 32: past it the least recently used entries go. */
  maxEntries?: number;
  /** The owner every entry and the directory must have. Default this process's uid. */
  uid?: number;
}

/**
 * Shell snapshots kept across ux processes, one file per key in a private directory that
 * every sandbox hides (ux's per-user runtime root, docs/threat-model.md):
 *
 * - `lookup` reads an entry through one descriptor opened with `O_NOFOLLOW`, and uses it only if it is
 *   a regular file, owned by `uid`, with no access for group or others and one link, not too large, of
 *   this format and this exact key; then every stamped file is stat'ed (no shell runs): one whose
 *   identity changed, or a changed variable that starts from another value now, makes it stale.
 * - `store` writes a temporary file (0600, `O_EXCL`) in the same directory and renames it over the
 *   entry: a reader sees the old entry or the new one, never a part; two processes storing the same key
 *   race harmlessly (the last rename wins, both are whole). Then the oldest entries past `maxEntries`,
 *   and temporary files a dead writer left, are removed.
 *
 * Every failure is a miss (with a reason), never an error: the caller captures as without a cache.
 */
export class ShellSnapshotCache {
  readonly dir: string;
  private readonly maxEntries: number;
  private readonly uid: number | undefined;

  constructor(options: ShellSnapshotCacheOptions) {
    this.dir = options.dir;
    this.maxEntries = Math.max(1, options.maxEntries ?? DEFAULT_SNAPSHOT_CACHE_ENTRIES);
    this.uid = options.uid ?? process.getuid?.();
  }

  lookup(key: ShellSnapshotCacheKey, env: Record<string, string>): ShellSnapshotCacheLookup {
    const problem = this.checkDirectory(false);
    if (problem) return { hit: false, reason: problem };
    const file = join(this.dir, `${key.name}${SUFFIX}`);
    let entry = this.readEntry(file);
    // A rename over the entry by another process shows a second link for an instant: read it again.
    for (let again = 0; again < 3 && entry === LINKED; again++) entry = this.readEntry(file);
    if (entry === LINKED) return { hit: false, reason: `${file} has other links: refused` };
    if (typeof entry === 'string') return { hit: false, reason: entry };
    const read = entry.text;
    const newline = read.indexOf('\n');
    const headerEnd = read.indexOf('\n', newline + 1);
    if (read.slice(0, newline) !== FORMAT || headerEnd < 0)
      return { hit: false, reason: `${file} is not an entry of this format` };
    let header: Omit<CachedShellSnapshot, 'text'> & { material: string };
    try {
      header = JSON.parse(read.slice(newline + 1, headerEnd));
    } catch {
      return { hit: false, reason: `${file} has an unreadable header` };
    }
    if (header.material !== key.material) return { hit: false, reason: `${file} belongs to another key` };
    for (const [path, identity] of header.stamps) {
      if (fileIdentity(path) !== identity) return { hit: false, reason: `stale: ${path} changed` };
    }
    for (const name of header.changedVariables) {
      if ((env[name] ?? null) !== (header.startValues[name] ?? null))
        return { hit: false, reason: `stale: ${name} starts from another value` };
    }
    return {
      hit: true,
      entry: {
        text: read.slice(headerEnd + 1),
        stamps: header.stamps,
        changedVariables: header.changedVariables,
        startValues: header.startValues,
        diagnostics: header.diagnostics,
        capturedAt: header.capturedAt,
      },
    };
  }

  /** Stores an entry (see the class); returns a reason when it could not. */
  store(key: ShellSnapshotCacheKey, entry: CachedShellSnapshot): string | undefined {
    const problem = this.checkDirectory(true);
    if (problem) return problem;
    const { text, ...rest } = entry;
    // The header is ASCII (JSON with every other character escaped), the text latin1 as written.
    const header = JSON.stringify({ ...rest, material: key.material }).replace(
      /[\u007f-\uffff]/g,
      (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    const body = `${FORMAT}\n${header}\n${text}`;
    if (Buffer.byteLength(body, 'latin1') > MAX_SNAPSHOT_CACHE_ENTRY_BYTES)
      return `the snapshot is larger than ${MAX_SNAPSHOT_CACHE_ENTRY_BYTES} bytes`;
    const file = join(this.dir, `${key.name}${SUFFIX}`);
    const temporary = join(this.dir, `.${key.name}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      writeFileSync(temporary, body, { encoding: 'latin1', mode: 0o600, flag: 'wx' });
      renameSync(temporary, file);
    } catch (error) {
      rmSync(temporary, { force: true });
      return `could not write ${file}: ${(error as Error).message}`;
    }
    this.evict();
    return undefined;
  }

  /** Removes every entry (for `ux doctor`-style clean-ups and tests). */
  clear(): void {
    if (this.checkDirectory(false)) return;
    for (const name of readdirSync(this.dir)) rmSync(join(this.dir, name), { force: true });
  }

  private readEntry(file: string): { text: string } | string {
    let fd: number;
    try {
      fd = openSync(file, fs.O_RDONLY | fs.O_NOFOLLOW | fs.O_NONBLOCK);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return 'absent';
      return code === 'ELOOP' ? `${file} is a symbolic link: refused` : `${file}: ${code ?? error}`;
    }
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) return `${file} is not a regular file: refused`;
      if (this.uid !== undefined && stat.uid !== this.uid)
        return `${file} belongs to uid ${stat.uid}, not ${this.uid}: refused`;
      if ((stat.mode & 0o077) !== 0) return `${file} is open to others: refused`;
      if (stat.nlink !== 1) return LINKED;
      if (stat.size > MAX_SNAPSHOT_CACHE_ENTRY_BYTES) return `${file} is too large: refused`;
      const buffer = Buffer.alloc(stat.size);
      let done = 0;
      while (done < buffer.length) {
        const n = readSync(fd, buffer, done, buffer.length - done, done);
        if (n === 0) break;
        done += n;
      }
      // Touch it for the eviction's order (the least recently used goes first).
      const now = new Date();
      try {
        futimesSync(fd, now, now);
      } catch {
        // Read-only file systems: the order is then by write time.
      }
      return { text: buffer.subarray(0, done).toString('latin1') };
    } finally {
      closeSync(fd);
    }
  }

  /** Makes the directory when `create` (0700) and checks it; a reason when it cannot be used. */
  private checkDirectory(create: boolean): string | undefined {
    if (this.uid === undefined) return 'no cache on this platform (no owner to check)';
    if (create) {
      try {
        mkdirSync(this.dir, { mode: 0o700 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
          return `cannot make ${this.dir}: ${(error as NodeJS.ErrnoException).code ?? error}`;
      }
    }
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(this.dir);
    } catch {
      return 'absent';
    }
    if (stat.isSymbolicLink()) return `${this.dir} is a symbolic link: refused`;
    if (!stat.isDirectory()) return `${this.dir} is not a directory: refused`;
    if (stat.uid !== this.uid) return `${this.dir} belongs to uid ${stat.uid}: refused`;
    if ((stat.mode & 0o077) !== 0) chmodSync(this.dir, 0o700);
    return undefined;
  }

  private evict(): void {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return;
    }
    const now = Date.now();
    const entries: { path: string; used: number }[] = [];
    for (const name of names) {
      const path = join(this.dir, name);
      const stat = statSync(path, { throwIfNoEntry: false });
      if (!stat) continue;
      if (name.endsWith('.tmp')) {
        if (now - stat.mtimeMs > STALE_TEMPORARY_MS) rmSync(path, { force: true });
      } else if (name.endsWith(SUFFIX)) entries.push({ path, used: stat.mtimeMs });
    }
    if (entries.length <= this.maxEntries) return;
    entries.sort((a, b) => a.used - b.used);
    for (const { path } of entries.slice(0, entries.length - this.maxEntries)) rmSync(path, { force: true });
  }
}
