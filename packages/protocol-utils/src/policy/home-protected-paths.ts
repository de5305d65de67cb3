/**
 * What in a home directory runs as code, or decides what code runs, for something outside the
 * sandbox: the user's next login, their shell, git, ssh, editors, package managers and desktop. When
 * a writable root contains the home directory, each of these stays read-only; the ones marked `guard`
 * are also kept from being created (a shell reads the first of several start-up files, so a missing one
 * can be planted), also below directories that do not exist yet: with no `.config`, `mkdir -p
 * ~/.config/git` still works, and `git` is taken away as it appears (the directories on the way are
 * never taken: ordinary tools create `.config` and `.local`). A name that exists as a symbolic link
 * (stow-style dotfiles) is kept: whatever replaces it is taken away and the link made again.
 */
export interface HomeProtectedName {
  /** Relative to the home directory. */
  name: string;
  why: string;
  /** Kept from being created when missing, wherever its parent is (or is not yet). */
  guard: boolean;
}

const LOGIN = 'shell start-up file: code that runs at the next login or shell';
const PATH_DIR = 'a directory the stock ~/.profile puts first on PATH: a program there shadows the real one';
const GIT = 'global git configuration: programs git runs in every repository (core.fsmonitor, aliases)';
const TOOL = 'configuration that makes a tool run a program of its choosing';
const EDITOR = "an editor's start-up code";
const DESKTOP = 'started by the desktop session or the user service manager at the next login';

export const HOME_PROTECTED_NAMES: readonly HomeProtectedName[] = [
  // Shells: bash, zsh, sh, fish, readline.
  ...[
    '.bashrc',
    '.bash_profile',
    '.bash_login',
    '.bash_logout',
    '.bash_aliases',
    '.profile',
    '.zshrc',
    '.zshenv',
    '.zprofile',
    '.zlogin',
    '.zlogout',
    '.kshrc',
    '.mkshrc',
  ].map((name) => ({ name, why: LOGIN, guard: true })),
  { name: '.inputrc', why: 'readline key bindings: can type a command into the next shell', guard: true },
  { name: '.config/fish', why: "fish's configuration, conf.d and autoloaded functions", guard: true },
  { name: '.config/environment.d', why: 'variables (PATH) of every program of the next login', guard: true },
  { name: '.pam_environment', why: 'variables (PATH, LD_PRELOAD) of the next login', guard: true },
  // Programs found before the real ones.
  { name: 'bin', why: PATH_DIR, guard: true },
  { name: '.local/bin', why: PATH_DIR, guard: true },
  { name: '.cargo/bin', why: 'on PATH through ~/.cargo/env', guard: false },
  { name: '.cargo/env', why: 'sourced by the login files rustup writes', guard: false },
  { name: '.nvm', why: 'nvm.sh, sourced by ~/.bashrc, and the node it puts on PATH', guard: false },
  { name: '.pyenv', why: "pyenv's shims on PATH and the init ~/.bashrc sources", guard: false },
  { name: '.rbenv', why: "rbenv's shims on PATH", guard: false },
  { name: '.asdf', why: "asdf's shims on PATH and the script ~/.bashrc sources", guard: false },
  { name: '.sdkman', why: 'sdkman-init.sh, sourced by ~/.bashrc', guard: false },
  // git, ssh, signing.
  { name: '.gitconfig', why: GIT, guard: true },
  { name: '.config/git', why: GIT, guard: true },
  { name: '.ssh', why: 'SSH keys, trusted hosts, ~/.ssh/config (ProxyCommand) and ~/.ssh/rc', guard: true },
  {
    name: '.gnupg',
    why: "gpg's agent configuration (pinentry-program), used by signed commits",
    guard: true,
  },
  // Package managers and their registries.
  { name: '.npmrc', why: `${TOOL} (script-shell, node-options, a registry)`, guard: true },
  { name: '.yarnrc', why: `${TOOL} (yarn-path)`, guard: true },
  { name: '.yarnrc.yml', why: `${TOOL} (yarnPath)`, guard: true },
  { name: '.config/pip', why: 'the index pip installs from: code at the next pip install', guard: true },
  { name: '.pip', why: 'the index pip installs from: code at the next pip install', guard: true },
  { name: '.pydistutils.cfg', why: TOOL, guard: true },
  { name: '.cargo/config.toml', why: `${TOOL} (runners, linkers, aliases)`, guard: true },
  { name: '.cargo/config', why: `${TOOL} (runners, linkers, aliases)`, guard: true },
  { name: '.gemrc', why: TOOL, guard: true },
  { name: '.m2/settings.xml', why: TOOL, guard: true },
  { name: '.mavenrc', why: 'sourced by the mvn script', guard: true },
  { name: '.gradle/init.d', why: 'init scripts gradle runs in every build', guard: true },
  { name: '.gradle/gradle.properties', why: `${TOOL} (JVM arguments of every build)`, guard: true },
  // Tools that run code from their start-up or configuration files.
  { name: '.curlrc', why: 'options of every curl (output and upload files)', guard: true },
  { name: '.wgetrc', why: 'options of every wget (output and post files)', guard: true },
  {
    name: '.docker',
    why: "docker's credential helpers (credsStore): programs the host's docker runs",
    guard: true,
  },
  { name: '.kube', why: "kubectl's exec credential plugins: programs it runs", guard: true },
  { name: '.aws', why: "the AWS CLI's credential_process: a program it runs", guard: true },
  { name: '.config/gh', why: "gh's aliases (shell aliases run commands)", guard: true },
  { name: '.tmux.conf', why: "tmux's start-up commands (run-shell)", guard: true },
  { name: '.config/tmux', why: "tmux's start-up commands (run-shell)", guard: true },
  { name: '.screenrc', why: "screen's start-up commands", guard: true },
  { name: '.gdbinit', why: "gdb's start-up commands", guard: true },
  { name: '.lldbinit', why: "lldb's start-up commands", guard: true },
  { name: '.psqlrc', why: "psql's start-up commands (\\!)", guard: true },
  { name: '.sqliterc', why: "sqlite3's start-up commands (.shell)", guard: true },
  { name: '.irbrc', why: "irb's start-up code", guard: true },
  { name: '.pryrc', why: "pry's start-up code", guard: true },
  { name: '.Rprofile', why: "R's start-up code", guard: true },
  { name: '.ghci', why: "ghci's start-up commands", guard: true },
  { name: '.config/direnv', why: "direnv's direnvrc, sourced in every directory", guard: true },
  {
    name: '.local/share/direnv',
    why: "direnv's record of which .envrc files the user allowed to run",
    guard: true,
  },
  { name: '.cache/ux', why: "ux's own build of the zsh fork, run at the next session", guard: false },
  { name: '.direnvrc', why: "direnv's direnvrc, sourced in every directory", guard: true },
  { name: '.config/starship.toml', why: "the prompt's custom commands, run at every prompt", guard: true },
  // Editors.
  { name: '.vimrc', why: EDITOR, guard: true },
  { name: '.vim', why: `${EDITOR} (plugin/ is loaded at start)`, guard: true },
  { name: '.exrc', why: EDITOR, guard: true },
  { name: '.config/nvim', why: EDITOR, guard: true },
  { name: '.emacs', why: EDITOR, guard: true },
  { name: '.emacs.d', why: EDITOR, guard: true },
  { name: '.config/emacs', why: EDITOR, guard: true },
  // The desktop session and the user's service manager.
  { name: '.config/autostart', why: DESKTOP, guard: true },
  { name: '.config/systemd', why: DESKTOP, guard: true },
  { name: '.local/share/systemd', why: DESKTOP, guard: true },
  {
    name: '.local/share/applications',
    why: 'desktop entries: the program a file is opened with',
    guard: true,
  },
  { name: '.config/mimeapps.list', why: 'which program opens each kind of file', guard: true },
  ...['.xprofile', '.xsession', '.xsessionrc', '.xinitrc'].map((name) => ({
    name,
    why: DESKTOP,
    guard: true,
  })),
];
