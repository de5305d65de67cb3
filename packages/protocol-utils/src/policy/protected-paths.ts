import { posix, win32 } from 'node:path';
import type { FsView } from './fs-view.js';
import { gitConfigReferences } from './git-config-references.js';
import { HOME_PROTECTED_NAMES } from './home-protected-paths.js';

/** One path inside a writable root that must stay read-only, and why. */
export interface ProtectedPath {
  path: string;
  /**
   * What is there now. A `missing` path must not be created: a backend pre-empts its creation where it
   * can do so without leaving anything on the host (Seatbelt rules), or watches for it and takes it
   * away at once (bubblewrap); see docs/protected-paths.md.
   */
  kind: 'file' | 'dir' | 'symlink' | 'missing';
  /** The threat this path answers. */
  why: string;
  /**
   * A `read` entry of the policy itself, not a name ux protects: a deeper writable entry inside it
   * still wins (the most specific entry does), where nothing re-grants a protected name.
   */
  fromPolicy?: true;
}

/** Agent metadata directories: instructions and skills an agent must not rewrite for its future self. */
export const PROTECTED_METADATA_DIRS = ['.ux', '.codex', '.agents'] as const;

/** The user's shell start-up files: code that runs at the next login. */
export const SHELL_STARTUP_FILES = [
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.bash_logout',
  '.profile',
  '.zshrc',
  '.zshenv',
  '.zprofile',
  '.zlogin',
  '.zlogout',
  '.config/fish/config.fish',
] as const;

/** Other per-user files that configure or run code: global git config, SSH keys and trust. */
export const USER_CONFIG_PATHS = ['.gitconfig', '.config/git', '.ssh'] as const;

/**
 * What git reads as configuration or runs as code inside one git directory, and whether creating the
 * name when it is missing is a threat of its own. Everything else (objects, refs, index, logs, HEAD)
 * stays writable, so `git add` and `git commit` work in a writable workspace.
 */
const GIT_DIR_CODE: readonly { name: string; why: string; blockWhenMissing: boolean }[] = [
  {
    name: 'config',
    why: 'git configuration: names programs git runs (core.fsmonitor, core.pager, aliases, filters)',
    blockWhenMissing: true,
  },
  {
    name: 'config.worktree',
    why: 'per-worktree git configuration (read with extensions.worktreeConfig)',
    blockWhenMissing: true,
  },
  { name: 'hooks', why: 'git hooks: programs the next git command runs on the host', blockWhenMissing: true },
  {
    name: 'commondir',
    why: 'says where the repository, its config and hooks live; git reads it in every git directory',
    blockWhenMissing: true,
  },
  // A missing info/attributes is not guarded: it can only select drivers that configuration defines,
  // and the worktree's own .gitattributes, which a writable workspace always lets a command write, can
  // do the same.
  { name: 'info/attributes', why: 'selects filter and diff drivers', blockWhenMissing: false },
];
/** In a linked worktree's git dir: the files that say where the repository and its config are. */
const GIT_WORKTREE_POINTERS = ['commondir', 'gitdir', 'config.worktree'] as const;

export interface ProtectedPathsOptions {
  /** The user's home, for start-up files when it lies inside the writable root. */
  homeDir?: string;
  /** Default `PROTECTED_METADATA_DIRS`. */
  metadataDirs?: readonly string[];
  /** Path flavour of `root`, `homeDir` and the results; Windows plans are built on any OS. Default `posix`. */
  pathStyle?: 'posix' | 'win32';
  /**
   * Work trees of repositories found when the session started (`EffectivePolicy.knownRepositories`):
   * those below the root get their git surface protected like the root's own.
   */
  repositories?: readonly string[];
  /**
   * The session's PATH directories (absolute): those inside the home directory, when it lies inside
   * the root, are read-only (a program planted there shadows the real one at the next shell).
   */
  pathDirectories?: readonly string[];
  /**
   * The session's workspaces (project roots, the command's directory): a `.git` created in a directory
   * between the root and a workspace would become the repository around the workspace, so each such
   * missing `.git` is guarded like the root's own.
   */
  workspaces?: readonly string[];
}

type PathApi = typeof posix;

/**
 * The read-only carve-outs of one writable root (absolute; POSIX unless `pathStyle: 'win32'`): git configuration and hooks (also
 * of submodules, linked worktrees and the target of a `gitdir:` pointer file), the agent metadata
 * directories, and the user's start-up and config files when the home directory is inside the root.
 * A symlink is protected as the link itself, never by following it.
 */
export function protectedPaths(
  root: string,
  fs: FsView,
  options: ProtectedPathsOptions = {},
): ProtectedPath[] {
  const api: PathApi = options.pathStyle === 'win32' ? win32 : posix;
  const found: ProtectedPath[] = [];
  const seen = new Set<string>();
  const add = (path: string, why: string, blockWhenMissing = true) => {
    if (seen.has(path)) return;
    const kind = fs.kind(path);
    if (kind === undefined && !blockWhenMissing) return;
    seen.add(path);
    found.push({ path, kind: kind === undefined ? 'missing' : kind === 'other' ? 'file' : kind, why });
    // The same entry where the kernel reaches it, when a link leads there (the entry itself a link,
    // stow-style `~/.bashrc -> dotfiles/bashrc`, or one on the way, `~/.config -> dotfiles/config`):
    // protected too when it lies in this root, since the door's writers compare canonical paths.
    if (api === posix) {
      const real = canonical(path, { kind });
      if (real !== path && homeInside(real, root, api)) add(real, why, blockWhenMissing);
    }
  };
  // Canonical paths, one directory at a time and remembered (most entries share their parents, and
  // most are missing: a realpath() of each would cost a failed call per missing level).
  const canonicalDirs = new Map<string, string>();
  const canonical = (path: string, given?: { kind: ReturnType<FsView['kind']> }): string => {
    const known = canonicalDirs.get(path);
    if (known !== undefined) return known;
    const parent = posix.dirname(path);
    let real: string;
    if (parent === path) real = path;
    else if ((given ? given.kind : fs.kind(path)) === 'symlink')
      real = fs.realpath(path) ?? posix.join(canonical(parent), posix.basename(path));
    else real = posix.join(canonical(parent), posix.basename(path));
    canonicalDirs.set(path, real);
    return real;
  };

  // What a configuration points git at (a hooks directory, an included file, a program) is as
  // powerful as the configuration itself: protected when it lies in this root (also below directories
  // that do not exist yet: a backend that watches follows them as they appear).
  const inRoot: Add = (path, why, blockWhenMissing) => {
    if (homeInside(path, root, api)) add(path, why, blockWhenMissing);
  };
  const where = { fs, add, inRoot, api, pathStyle: options.pathStyle, homeDir: options.homeDir };
  protectWorkTree(root, where, true);
  for (const repository of options.repositories ?? []) {
    if (repository !== root && isBelow(repository, root, api)) protectWorkTree(repository, where, false);
  }
  // git looks for the repository around a directory by walking up: a new .git in any directory
  // between the root and a workspace would be found first (`git init ..`, an apply_patch adding
  // ../.git/config), so those are guarded too (when the workspace has no .git of its own nothing
  // stops the walk there).
  for (const workspace of options.workspaces ?? []) {
    if (!isBelow(workspace, root, api)) continue;
    for (let dir = api.dirname(workspace); dir !== root && isBelow(dir, root, api); dir = api.dirname(dir)) {
      const gitPath = api.join(dir, '.git');
      if (fs.kind(gitPath) === undefined)
        add(
          gitPath,
          'a new git directory above the workspace would become its repository, with its own config and hooks',
        );
    }
  }
  if (options.homeDir && api === posix) {
    for (const name of ['.gitconfig', '.config/git/config']) {
      const text = fs.readFile(api.join(options.homeDir, name));
      if (text === undefined) continue;
      for (const ref of gitConfigReferences(text, {
        gitDir: options.homeDir,
        workTree: options.homeDir,
        homeDir: options.homeDir,
      }))
        inRoot(ref.path, `${ref.why}, from ~/${name}`, true);
    }
  }

  for (const name of options.metadataDirs ?? PROTECTED_METADATA_DIRS) {
    add(
      api.join(root, name),
      'agent metadata: configuration, instructions and skills an agent loads at its next start',
    );
  }

  const home = options.homeDir;
  if (home && homeInside(home, root, api)) {
    for (const { name, why, guard } of HOME_PROTECTED_NAMES) {
      // A missing name is guarded also below directories that do not exist (`.config/git` with no
      // `.config`): the directories on the way are ordinary and stay writable (bubblewrap's guard
      // follows them as they appear and takes away only the name itself).
      add(api.join(home, name), why, guard);
    }
    for (const dir of options.pathDirectories ?? []) {
      if (api.isAbsolute(dir) && dir !== home && isBelow(api.normalize(dir), home, api))
        add(api.normalize(dir), 'a directory on PATH: a program planted there shadows the real one', false);
    }
  }
  return found;
}

/**
 * A work tree's `.git`: a git directory's configuration and hooks; a pointer file and what it points
 * to; a link. A missing `.git` is guarded only at the root (a new repository there brings its own
 * configuration and hooks, which git on the host would run in every folder below).
 */
interface WorkTreeContext {
  fs: FsView;
  add: Add;
  /** `add` for paths inside the root only. */
  inRoot: Add;
  api: PathApi;
  pathStyle: 'posix' | 'win32' | undefined;
  homeDir: string | undefined;
}

function protectWorkTree(workTree: string, where: WorkTreeContext, guardMissing: boolean): void {
  const { fs, add, api, pathStyle } = where;
  const gitPath = api.join(workTree, '.git');
  const gitKind = fs.kind(gitPath);
  if (gitKind === 'dir') {
    protectGitDir(gitPath, fs, add, api);
    protectReferences(gitPath, workTree, where);
  } else if (gitKind === 'file') {
    add(gitPath, 'git pointer file: says where the repository lives');
    const target = gitdirTarget(gitPath, fs, pathStyle);
    if (target) {
      protectLinkedGitDir(target, fs, add, api);
      protectReferences(target, workTree, where);
      const commondir = fs.readFile(api.join(target, 'commondir'))?.trim();
      if (commondir) protectReferences(api.resolve(target, commondir), workTree, where);
    }
  } else if (gitKind === 'symlink') {
    add(gitPath, 'git directory link');
  } else if (guardMissing) {
    add(gitPath, 'a new git directory brings its own config and hooks, which git on the host would run');
  }
}

/** Hook frameworks whose installed hook reads instructions from a file of the work tree. */
const HOOK_FRAMEWORKS: readonly { marker: RegExp; files: readonly string[]; why: string }[] = [
  {
    marker: /pre-commit/,
    files: ['.pre-commit-config.yaml'],
    why: "pre-commit's configuration: the programs the installed git hook runs",
  },
  {
    marker: /lefthook/,
    files: [
      'lefthook.yml',
      '.lefthook.yml',
      'lefthook.yaml',
      '.lefthook.yaml',
      'lefthook-local.yml',
      '.lefthook-local.yml',
    ],
    why: "lefthook's configuration: the programs the installed git hook runs",
  },
];

/**
 * What a git directory's configuration points at inside the root (`gitConfigReferences`), and the
 * configuration file of a hook framework whose hook is installed (a pre-commit hook runs what
 * `.pre-commit-config.yaml` says).
 */
function protectReferences(gitDir: string, workTree: string, where: WorkTreeContext): void {
  const { fs, inRoot, api, homeDir } = where;
  if (api !== posix) return;
  let hooks = api.join(gitDir, 'hooks');
  for (const name of ['config', 'config.worktree']) {
    const text = fs.readFile(api.join(gitDir, name));
    if (text === undefined) continue;
    for (const ref of gitConfigReferences(text, { gitDir, workTree, ...(homeDir ? { homeDir } : {}) })) {
      inRoot(ref.path, ref.why, true);
      if (ref.why.startsWith('the hooks directory')) hooks = ref.path;
    }
  }
  if (fs.kind(hooks) !== 'dir') return;
  const installed = fs
    .readdir(hooks)
    .filter((name) => !name.endsWith('.sample'))
    .map((name) => fs.readFile(api.join(hooks, name)) ?? '')
    .join('\n');
  for (const framework of HOOK_FRAMEWORKS) {
    if (!framework.marker.test(installed)) continue;
    for (const file of framework.files) inRoot(api.join(workTree, file), framework.why, false);
  }
}

/** Strictly below `root` (Windows paths compare case-insensitively). */
function isBelow(path: string, root: string, api: PathApi): boolean {
  return path !== root && homeInside(path, root, api);
}

type Add = (path: string, why: string, blockWhenMissing?: boolean) => void;

function protectGitDir(gitDir: string, fs: FsView, add: Add, api: PathApi, depth = 0): void {
  for (const { name, why, blockWhenMissing } of GIT_DIR_CODE)
    add(api.join(gitDir, name), why, blockWhenMissing);
  if (depth > 8) return;
  protectModules(api.join(gitDir, 'modules'), fs, add, api, depth);
  const worktrees = api.join(gitDir, 'worktrees');
  for (const name of fs.kind(worktrees) === 'dir' ? fs.readdir(worktrees) : []) {
    const worktree = api.join(worktrees, name);
    if (fs.kind(worktree) !== 'dir') continue;
    for (const pointer of GIT_WORKTREE_POINTERS)
      add(api.join(worktree, pointer), 'linked worktree pointer or config');
  }
}

/**
 * Submodule git dirs under `modules/`. A submodule named `libs/json` lives in `modules/libs/json`, so a
 * directory that is not itself a git dir (no `HEAD`, no `config`) is searched further.
 */
function protectModules(directory: string, fs: FsView, add: Add, api: PathApi, depth: number): void {
  if (depth > 8 || fs.kind(directory) !== 'dir') return;
  for (const name of fs.readdir(directory)) {
    const entry = api.join(directory, name);
    if (fs.kind(entry) !== 'dir') continue;
    const isGitDir =
      fs.kind(api.join(entry, 'HEAD')) !== undefined || fs.kind(api.join(entry, 'config')) !== undefined;
    if (isGitDir) protectGitDir(entry, fs, add, api, depth + 1);
    else protectModules(entry, fs, add, api, depth + 1);
  }
}

/** A linked worktree's or submodule's git dir, and the repository it points back to. */
function protectLinkedGitDir(gitDir: string, fs: FsView, add: Add, api: PathApi): void {
  const commondir = fs.readFile(api.join(gitDir, 'commondir'))?.trim();
  if (commondir) {
    for (const pointer of GIT_WORKTREE_POINTERS)
      add(api.join(gitDir, pointer), 'linked worktree pointer or config');
    const common = api.resolve(gitDir, commondir);
    if (fs.kind(common) === 'dir') protectGitDir(common, fs, add, api);
  } else {
    protectGitDir(gitDir, fs, add, api);
  }
}

/** The directory a `.git` file points at (`gitdir: <path>`, relative to the file), when it exists. */
export function gitdirTarget(
  gitFile: string,
  fs: FsView,
  pathStyle: 'posix' | 'win32' = 'posix',
): string | undefined {
  const api: PathApi = pathStyle === 'win32' ? win32 : posix;
  const text = fs.readFile(gitFile);
  const match = text ? /^gitdir:\s*(.+?)\s*$/m.exec(text) : null;
  if (!match) return undefined;
  const target = api.resolve(api.dirname(gitFile), match[1]!);
  return fs.kind(target) === 'dir' ? target : undefined;
}

/** Whether the home directory is the root or below it (Windows paths compare case-insensitively). */
function homeInside(home: string, root: string, api: PathApi): boolean {
  if (api === posix) return home === root || home.startsWith(`${root}/`);
  const h = home.toLowerCase();
  const r = root.toLowerCase();
  return h === r || h.startsWith(r.endsWith('\\') ? r : `${r}\\`);
}
