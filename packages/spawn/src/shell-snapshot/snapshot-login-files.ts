import { readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { SnapshotShellKind } from './snapshot-shell-kind.js';

/**
 * The files a shell may read as a login shell, whose modification time decides whether a snapshot is
 * still fresh. `~` is `env.HOME` (the home the commands will have), else this process's home.
 *
 * - bash: `~/.bash_profile`, `~/.bash_login`, `~/.profile`, `~/.bashrc` (commonly sourced by the
 *   others), `/etc/profile`, `/etc/bash.bashrc`, `$BASH_ENV`;
 * - zsh: `.zshenv`, `.zprofile`, `.zshrc`, `.zlogin` in `$ZDOTDIR` (else `~`), `/etc/zsh/*` and
 *   `/etc/z*` (the two layouts distributions use), `/etc/profile`;
 * - sh: `~/.profile`, `/etc/profile`, `$ENV`.
 *
 * Every kind also lists `/etc/profile.d` (the directory, whose mtime changes when a file is added or
 * removed) and the `*.sh` files in it. Paths that do not exist are listed too: creating one makes a
 * snapshot stale.
 */
export function snapshotLoginFiles(kind: SnapshotShellKind, env: Record<string, string>): string[] {
  const home = env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir();
  const inHome = (...names: string[]) => names.map((name) => join(home, name));
  const files: string[] = [];
  switch (kind) {
    case 'bash':
      files.push(
        ...inHome('.bash_profile', '.bash_login', '.profile', '.bashrc'),
        '/etc/profile',
        '/etc/bash.bashrc',
      );
      files.push(...startupFile(env.BASH_ENV, home));
      break;
    case 'zsh': {
      const dot = env.ZDOTDIR && isAbsolute(env.ZDOTDIR) ? env.ZDOTDIR : home;
      for (const name of ['.zshenv', '.zprofile', '.zshrc', '.zlogin']) files.push(join(dot, name));
      for (const name of ['zshenv', 'zprofile', 'zshrc', 'zlogin'])
        files.push(`/etc/zsh/${name}`, `/etc/${name}`);
      files.push('/etc/profile');
      break;
    }
    case 'sh':
      files.push(...inHome('.profile'), '/etc/profile');
      files.push(...startupFile(env.ENV, home));
      break;
  }
  files.push('/etc/profile.d', ...profileDFiles());
  return [...new Set(files)];
}

/** `$BASH_ENV` / `$ENV` when it names a file by an absolute (or `~/`) path; a relative one has no fixed place. */
function startupFile(path: string | undefined, home: string): string[] {
  if (!path) return [];
  if (path.startsWith('~/')) return [join(home, path.slice(2))];
  return isAbsolute(path) ? [path] : [];
}

function profileDFiles(): string[] {
  try {
    return readdirSync('/etc/profile.d')
      .filter((name) => name.endsWith('.sh'))
      .sort()
      .map((name) => `/etc/profile.d/${name}`);
  } catch {
    return [];
  }
}
