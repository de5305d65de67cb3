import { accessSync, constants, statSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface LocateZshForkOptions {
  /** `$UX_HOME` (default `~/.ux`), resolved by the caller. */
  uxHome: string;
  /** `zsh_fork.zsh_path` from the configuration, when set. */
  configured?: string;
}

export interface ZshForkLocation {
  /** The zsh to use. */
  path: string;
  /** `configured`: zsh_fork.zsh_path; `default`: what `ux zsh-fork build` installs. */
  origin: 'configured' | 'default';
  /** Whether `path` is an executable file (not whether it is patched: `verifyZshFork` says that). */
  exists: boolean;
  /** `$UX_HOME/zsh-fork`, where `ux zsh-fork build` installs by default. */
  defaultOutDir: string;
  /** The directory holding BUILD_INFO.json for `path` (`<dir>/bin/zsh` → `<dir>`). */
  buildDir: string;
}

/** The directory `ux zsh-fork build` installs into by default. */
export function defaultZshForkDir(uxHome: string): string {
  return join(uxHome, 'zsh-fork');
}

/**
 * Which patched zsh to use: a configured `zsh_fork.zsh_path` wins, else `$UX_HOME/zsh-fork/bin/zsh`;
 * and whether it is there. Used by `ux doctor`, `ux zsh-fork status` and the door.
 */
export function locateZshFork(options: LocateZshForkOptions): ZshForkLocation {
  const defaultOutDir = defaultZshForkDir(options.uxHome);
  const configured = options.configured?.trim() ? options.configured : undefined;
  const path = configured ?? join(defaultOutDir, 'bin', 'zsh');
  return {
    path,
    origin: configured ? 'configured' : 'default',
    exists: isExecutableFile(path),
    defaultOutDir,
    buildDir: dirname(dirname(path)),
  };
}

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
