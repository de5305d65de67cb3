import { closeSync, constants, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { type FsView, gitdirTarget, nodeFsView } from '@ux/protocol-utils';
import { byPath, canonicalPath, type Reach } from './pinned-directory.js';
import { lstatNs, statNs } from './session-changes.js';

/** A repository git could use, found the way git finds it. */
export interface GitRepository {
  /** The work tree's `.git` entry (a directory, a pointer file or a link); absent for a bare repository. */
  dotGit?: string;
  /** The work tree; absent for a bare repository. */
  workTree?: string;
  /** The git directory (`.git`, what a pointer file names, or the bare repository itself). */
  gitDir: string;
  /** Where `commondir` leads (the main repository of a linked worktree), else `gitDir`. */
  commonDir: string;
}

/** One file (or directory) whose content decides what git runs. */
export interface SurfaceEntry {
  path: string;
  why: string;
}

/**
 * Every repository git could use when started in `start` (canonical): at each directory from `start` up
 * to `/`, a `.git` directory, a `.git` pointer file (`gitdir: …`, then `commondir`) or link, and the
 * directory itself when it looks like a bare repository. Git stops at the first one; all are returned
 * so that a look-alike git would not take cannot hide the one it would (and `GIT_DIR` of the session's
 * environment, when set, comes first). Every file is looked at through `reach` (the descriptors of a
 * pinned working directory and the directories above it); the paths returned are the plain ones.
 */
export function repositoriesAround(
  start: string,
  gitDirFromEnv?: string,
  reach: Reach = byPath,
): GitRepository[] {
  const found: GitRepository[] = [];
  const fs = reachingFsView(reach);
  if (gitDirFromEnv && isAbsolute(gitDirFromEnv) && looksLikeGitDir(gitDirFromEnv, reach))
    found.push(withCommonDir({ gitDir: gitDirFromEnv }, reach));
  for (let dir = start; ; dir = dirname(dir)) {
    const dotGit = join(dir, '.git');
    const stat = lstatNs(reach(dotGit));
    if (stat?.isFile()) {
      const target = gitdirTarget(dotGit, fs);
      found.push(withCommonDir({ dotGit, workTree: dir, gitDir: target ?? dotGit }, reach));
    } else if (stat?.isDirectory() || stat?.isSymbolicLink()) {
      found.push(withCommonDir({ dotGit, workTree: dir, gitDir: dotGit }, reach));
    }
    if (looksLikeGitDir(dir, reach) && !found.some((repo) => repo.gitDir === dir))
      found.push(withCommonDir({ gitDir: dir }, reach));
    if (dirname(dir) === dir) return found;
  }
}

/** `nodeFsView()` whose every access goes through `reach` (paths in, plain paths out). */
function reachingFsView(reach: Reach): FsView {
  const fs = nodeFsView();
  if (reach === byPath) return fs;
  return {
    kind: (path) => fs.kind(reach(path)),
    readFile: (path) => fs.readFile(reach(path)),
    readdir: (path) => fs.readdir(reach(path)),
    realpath: (path) => canonicalPath(path, reach),
  };
}

/** How deep include files and nested submodules are followed. */
const MAX_DEPTH = 4;
/** Submodules read from one index at most. */
const MAX_GITLINKS = 256;
/** An index larger than this is not read for submodules (the repository is then judged by the rest). */
const MAX_INDEX_BYTES = 64 * 1024 * 1024;

export interface SurfaceOptions {
  homeDir?: string;
  /** The directory git runs in (relative program paths in configuration are tried against it too). */
  cwd?: string;
  /** How files are reached (the descriptors of a pinned working directory); paths as they are by default. */
  reach?: Reach;
}

/**
 * The configuration surface of a repository: the `.git` pointer, `config`, `config.worktree`,
 * `commondir`, `hooks/` and each hook (of the git directory and of the common directory), what
 * `core.hooksPath` and `include.path` / `includeIf.*.path` name, every existing path that a configuration
 * value names as a program (`core.fsmonitor = ./watch`, `filter.x.clean = scripts/clean`), and the same
 * for each submodule the index lists (git status runs git in each one).
 */
export function gitConfigurationSurface(
  repository: GitRepository,
  options: SurfaceOptions = {},
  depth = 0,
): SurfaceEntry[] {
  const entries: SurfaceEntry[] = [];
  const reach = options.reach ?? byPath;
  const add = (path: string, why: string) => {
    if (!entries.some((entry) => entry.path === path)) entries.push({ path, why });
  };
  if (repository.dotGit && !lstatNs(reach(repository.dotGit))?.isDirectory())
    add(repository.dotGit, 'the .git pointer: says where the repository is');
  const configs: string[] = [];
  for (const dir of new Set([repository.gitDir, repository.commonDir])) {
    add(
      join(dir, 'config'),
      'git configuration: names programs git runs (core.fsmonitor, core.pager, aliases, filters)',
    );
    add(join(dir, 'config.worktree'), 'per-worktree git configuration');
    add(join(dir, 'commondir'), 'says where the repository and its configuration are');
    addHooks(join(dir, 'hooks'), add, reach);
    configs.push(join(dir, 'config'), join(dir, 'config.worktree'));
  }
  const home = options.homeDir ?? homedir();
  const seen = new Set<string>();
  const readConfig = (file: string, level: number) => {
    if (seen.has(file) || level > MAX_DEPTH) return;
    seen.add(file);
    const text = readText(file, reach);
    if (text === undefined) return;
    for (const { section, key, value } of parseGitConfig(text)) {
      if (section === 'core' && key === 'hookspath') {
        const dir = expandPath(value, home, repository.workTree ?? repository.gitDir);
        if (dir) addHooks(dir, add, reach);
      } else if ((section === 'include' || section.startsWith('includeif')) && key === 'path') {
        const included = expandPath(value, home, dirname(file));
        if (included) {
          add(included, `a file ${file} includes as git configuration`);
          readConfig(included, level + 1);
        }
      }
      for (const path of programPaths(value, home, [repository.workTree, options.cwd], reach))
        add(path, `a program git configuration names (${section}.${key})`);
    }
  };
  for (const file of configs) readConfig(file, 0);

  if (repository.workTree && depth < MAX_DEPTH) {
    const objectFormat = /objectformat\s*=\s*sha256/i.test(
      readText(join(repository.commonDir, 'config'), reach) ?? '',
    );
    for (const link of gitlinksOfIndex(reach(join(repository.gitDir, 'index')), objectFormat ? 32 : 20)) {
      const workTree = join(repository.workTree, link);
      const dotGit = join(workTree, '.git');
      const stat = lstatNs(reach(dotGit));
      if (!stat) continue;
      const gitDir = stat.isFile() ? (gitdirTarget(dotGit, reachingFsView(reach)) ?? dotGit) : dotGit;
      const nested = withCommonDir({ dotGit, workTree, gitDir }, reach);
      for (const entry of gitConfigurationSurface(nested, options, depth + 1))
        add(entry.path, `in submodule ${link}: ${entry.why}`);
    }
  }
  return entries;
}

function addHooks(dir: string, add: (path: string, why: string) => void, reach: Reach): void {
  add(dir, 'git hooks: programs git commands run');
  if (!statNs(reach(dir))?.isDirectory()) return;
  let names: string[] = [];
  try {
    names = readdirSync(reach(dir));
  } catch {
    return;
  }
  for (const name of names) add(join(dir, name), 'a git hook: a program git commands run');
}

/** A directory git would take for a repository: `HEAD` and `objects/` (or a `commondir` pointer). */
function looksLikeGitDir(dir: string, reach: Reach): boolean {
  if (!statNs(reach(join(dir, 'HEAD')))?.isFile()) return false;
  return (
    statNs(reach(join(dir, 'objects')))?.isDirectory() === true ||
    statNs(reach(join(dir, 'commondir'))) !== undefined
  );
}

function withCommonDir(repository: Omit<GitRepository, 'commonDir'>, reach: Reach): GitRepository {
  const pointer = readText(join(repository.gitDir, 'commondir'), reach)?.trim();
  return { ...repository, commonDir: pointer ? resolve(repository.gitDir, pointer) : repository.gitDir };
}

/**
 * A regular file's text (`nodeFsView().readFile`: opened without blocking and checked on the opened
 * descriptor, so a FIFO or device swapped in after a look cannot hang the host).
 */
function readText(path: string, reach: Reach): string | undefined {
  return nodeFsView().readFile(reach(path));
}

/** `~/x`, an absolute path, or one relative to `base`; undefined for an empty value. */
function expandPath(value: string, home: string, base: string): string | undefined {
  if (value === '') return undefined;
  if (value === '~' || value.startsWith('~/')) return join(home, value.slice(2));
  return resolve(base, value);
}

/**
 * Existing files that a configuration value names as a path: each word with a `/` in it (split on
 * spaces and shell punctuation), absolute, `~/…`, or relative to the work tree or the working directory.
 */
function programPaths(
  value: string,
  home: string,
  bases: readonly (string | undefined)[],
  reach: Reach,
): string[] {
  const found: string[] = [];
  for (const word of value.split(/[\s;|&()<>'"`=,]+/)) {
    if (!word.includes('/')) continue;
    const candidates =
      word.startsWith('/') || word.startsWith('~')
        ? [expandPath(word, home, '/')]
        : bases.filter((base): base is string => base !== undefined).map((base) => resolve(base, word));
    for (const candidate of candidates) if (candidate && lstatNs(reach(candidate))) found.push(candidate);
  }
  return found;
}

/**
 * The entries of a git configuration file: lower-cased section (with its subsection after a space) and
 * key, and the value without quotes and comments. Enough to find paths; not a full parser (escapes
 * other than `\"` and `\\` are kept as written).
 */
export function parseGitConfig(text: string): { section: string; key: string; value: string }[] {
  const entries: { section: string; key: string; value: string }[] = [];
  let section = '';
  const lines = text.replace(/\\\r?\n/g, '').split(/\r?\n/);
  for (const raw of lines) {
    let line = raw.trim();
    if (line.startsWith('[')) {
      const end = line.indexOf(']');
      if (end < 0) continue;
      const header = line.slice(1, end).trim();
      const sub = /^([^\s"]+)\s+"(.*)"$/.exec(header);
      section = sub ? `${sub[1]!.toLowerCase()} ${sub[2]}` : header.toLowerCase();
      line = line.slice(end + 1).trim();
      if (line === '') continue;
    }
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const equals = line.indexOf('=');
    const key = (equals < 0 ? line : line.slice(0, equals)).trim().toLowerCase();
    const value = equals < 0 ? 'true' : unquote(line.slice(equals + 1));
    entries.push({ section, key, value });
  }
  return entries;
}

function unquote(value: string): string {
  let out = '';
  let quoted = false;
  for (let index = 0; index < value.length; index++) {
    const char = value[index]!;
    if (char === '\\' && index + 1 < value.length) {
      out += value[++index];
      continue;
    }
    if (char === '"') {
      quoted = !quoted;
      continue;
    }
    if (!quoted && (char === '#' || char === ';')) break;
    out += char;
  }
  return out.trim();
}

/**
 * The paths of the submodules (gitlinks, mode 160000) an index lists: versions 2, 3 and 4 of git's
 * index format. An unreadable, unknown or oversized index gives none.
 */
export function gitlinksOfIndex(indexPath: string, hashLength = 20): string[] {
  const stat = statNs(indexPath);
  if (!stat?.isFile() || stat.size > BigInt(MAX_INDEX_BYTES) || stat.size < 12n) return [];
  let data: Buffer;
  try {
    data = readAll(indexPath, Number(stat.size));
  } catch {
    return [];
  }
  if (data.toString('latin1', 0, 4) !== 'DIRC') return [];
  const version = data.readUInt32BE(4);
  if (version < 2 || version > 4) return [];
  const count = data.readUInt32BE(8);
  const links: string[] = [];
  let offset = 12;
  let previous = '';
  const fixed = 40 + hashLength + 2;
  for (let index = 0; index < count && links.length < MAX_GITLINKS; index++) {
    const start = offset;
    if (offset + fixed > data.length) return links;
    const mode = data.readUInt32BE(offset + 24);
    const flags = data.readUInt16BE(offset + 40 + hashLength);
    offset += fixed;
    if (version >= 3 && flags & 0x4000) offset += 2;
    let name: string;
    if (version === 4) {
      let byte = data[offset++]!;
      let strip = byte & 127;
      while (byte & 128) {
        byte = data[offset++]!;
        strip = ((strip + 1) << 7) | (byte & 127);
      }
      const end = data.indexOf(0, offset);
      if (end < 0 || strip > previous.length) return links;
      name = previous.slice(0, previous.length - strip) + data.toString('utf8', offset, end);
      offset = end + 1;
    } else {
      const end = data.indexOf(0, offset);
      if (end < 0) return links;
      name = data.toString('utf8', offset, end);
      offset = start + ((end - start + 8) & ~7);
    }
    previous = name;
    if ((mode & 0o170000) === 0o160000) links.push(name);
  }
  return links;
}

function readAll(path: string, size: number): Buffer {
  // Without blocking, and checked on the descriptor: a FIFO swapped in after the look must not hang us.
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${path} is not a regular file`);
    const buffer = Buffer.alloc(size);
    let read = 0;
    while (read < size) {
      const got = readSync(fd, buffer, read, size - read, read);
      if (got === 0) break;
      read += got;
    }
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}
