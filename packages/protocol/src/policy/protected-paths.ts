import { posix } from 'node:path';
import type { FsView } from './fs-view.js';

/** One path inside a writable root that must stay read-only, and why. */
export interface ProtectedPath {
  path: string;
  /** What is there now; `missing` paths must not be created. */
  kind: 'file' | 'dir' | 'symlink' | 'missing';
  why: string;
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

/** Start-up files whose creation is blocked when missing (the ones every common shell reads). */
const STARTUP_FILES_TO_BLOCK = ['.bashrc', '.bash_profile', '.profile', '.zshrc', '.zshenv'];

/**
 * What git reads as configuration or runs as code inside one git directory. Everything else (objects,
 * refs, index, logs, HEAD) stays writable, so `git add` and `git commit` work in a writable workspace.
 */
const GIT_DIR_CODE = ['config', 'config.worktree', 'hooks', 'info/attributes'] as const;
/** In a linked worktree's git dir: the files that say where the repository and its config are. */
const GIT_WORKTREE_POINTERS = ['commondir', 'gitdir', 'config.worktree'] as const;

export interface ProtectedPathsOptions {
  /** The user's home, for start-up files when it lies inside the writable root. */
  homeDir?: string;
  /** Default `PROTECTED_METADATA_DIRS`. */
  metadataDirs?: readonly string[];
}

/**
 * The read-only carve-outs of one writable root (absolute, POSIX): git configuration and hooks (also
 * of submodules, linked worktrees and the target of a `gitdir:` pointer file), the agent metadata
 * directories, and the user's start-up and config files when the home directory is inside the root.
 * A symlink is protected as the link itself, never by following it.
 */
export function protectedPaths(
  root: string,
  fs: FsView,
  options: ProtectedPathsOptions = {},
): ProtectedPath[] {
  const found: ProtectedPath[] = [];
  const seen = new Set<string>();
  const add = (path: string, why: string, blockWhenMissing = true) => {
    if (seen.has(path)) return;
    const kind = fs.kind(path);
    if (kind === undefined && !blockWhenMissing) return;
    seen.add(path);
    found.push({ path, kind: kind === undefined ? 'missing' : kind === 'other' ? 'file' : kind, why });
  };

  const gitPath = posix.join(root, '.git');
  const gitKind = fs.kind(gitPath);
  if (gitKind === 'dir') {
    protectGitDir(gitPath, fs, add);
  } else if (gitKind === 'file') {
    add(gitPath, 'git pointer file: says where the repository lives');
    const target = gitdirTarget(gitPath, fs);
    if (target) protectLinkedGitDir(target, fs, add);
  } else if (gitKind === 'symlink') {
    add(gitPath, 'git directory link');
  } else {
    add(gitPath, 'a new git directory would bring its own hooks and config');
  }

  for (const name of options.metadataDirs ?? PROTECTED_METADATA_DIRS) {
    add(posix.join(root, name), 'agent metadata: instructions and skills');
  }

  const home = options.homeDir;
  if (home && (home === root || home.startsWith(`${root}/`))) {
    for (const name of SHELL_STARTUP_FILES) {
      add(posix.join(home, name), 'shell start-up file', STARTUP_FILES_TO_BLOCK.includes(name));
    }
    for (const name of USER_CONFIG_PATHS) add(posix.join(home, name), 'user git or SSH configuration', false);
  }
  return found;
}

type Add = (path: string, why: string, blockWhenMissing?: boolean) => void;

function protectGitDir(gitDir: string, fs: FsView, add: Add, depth = 0): void {
  for (const name of GIT_DIR_CODE) {
    // config and hooks exist in every repository; the others must not be created either.
    add(posix.join(gitDir, name), 'git configuration or hooks');
  }
  if (depth > 8) return;
  const modules = posix.join(gitDir, 'modules');
  for (const name of fs.kind(modules) === 'dir' ? fs.readdir(modules) : []) {
    const module = posix.join(modules, name);
    if (fs.kind(module) === 'dir') protectGitDir(module, fs, add, depth + 1);
  }
  const worktrees = posix.join(gitDir, 'worktrees');
  for (const name of fs.kind(worktrees) === 'dir' ? fs.readdir(worktrees) : []) {
    const worktree = posix.join(worktrees, name);
    if (fs.kind(worktree) !== 'dir') continue;
    for (const pointer of GIT_WORKTREE_POINTERS)
      add(posix.join(worktree, pointer), 'linked worktree pointer or config');
  }
}

/** A linked worktree's or submodule's git dir, and the repository it points back to. */
function protectLinkedGitDir(gitDir: string, fs: FsView, add: Add): void {
  const commondir = fs.readFile(posix.join(gitDir, 'commondir'))?.trim();
  if (commondir) {
    for (const pointer of GIT_WORKTREE_POINTERS)
      add(posix.join(gitDir, pointer), 'linked worktree pointer or config');
    const common = posix.resolve(gitDir, commondir);
    if (fs.kind(common) === 'dir') protectGitDir(common, fs, add);
  } else {
    protectGitDir(gitDir, fs, add);
  }
}

/** The directory a `.git` file points at (`gitdir: <path>`, relative to the file), when it exists. */
export function gitdirTarget(gitFile: string, fs: FsView): string | undefined {
  const text = fs.readFile(gitFile);
  const match = text ? /^gitdir:\s*(.+?)\s*$/m.exec(text) : null;
  if (!match) return undefined;
  const target = posix.resolve(posix.dirname(gitFile), match[1]!);
  return fs.kind(target) === 'dir' ? target : undefined;
}
