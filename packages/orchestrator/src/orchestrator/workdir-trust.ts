import { realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { isUnder } from '@ux/protocol/core';
import { type EscalationScope, writableRootOf } from './escalation-scope.js';
import { gitConfigurationSurface, repositoriesAround } from './git-repository-surface.js';
import { configFilesFor, type ProgramConfigFiles } from './program-config-files.js';
import { bornSince, entryChangedSince, lstatNs, statNs } from './session-changes.js';

export type WorkdirTrust =
  | {
      trusted: true;
      /** The working directory the checks looked at (canonical): where the program should run. */
      cwd: string;
    }
  | {
      trusted: false;
      /** What the sandbox wrote and why it matters, naming the file. */
      why: string;
    };

export interface WorkdirTrustInput {
  /** The shell's working directory at the exec (as the sandbox saw it). */
  cwd: string;
  /** argv of the exec (options that name another directory are looked at). */
  argv: readonly string[];
  /** File names of the program: as run, and where its links lead (`python3`, `python3.11`). */
  programNames: readonly string[];
  scope: EscalationScope;
}

/**
 * Whether a program may run outside the sandbox in this working directory without reading
 * configuration the sandbox wrote in this session (docs/zsh-fork.md, "Configuration the sandbox
 * wrote"). Untrusted when:
 * - the directory is in the sandbox's private `/tmp` (the host's directory of that name is another one),
 *   or does not exist outside;
 * - it lies in a writable root and was created during the session (birth time, where recorded);
 * - a repository git could use there (`repositoriesAround`) has a configuration surface entry
 *   (`gitConfigurationSurface`) in a writable root that was created or changed during the session, or
 *   its git directory was created during it;
 * - for a program of `PROGRAM_CONFIG_FILES`, one of its files in the directory or above it (while in a
 *   writable root), or in the home directory (when that lies in a writable root), was created or changed
 *   during the session.
 * The same checks apply to a directory or file an option names (`git -C dir`, `make -f file`).
 */
export function workdirTrust(input: WorkdirTrustInput): WorkdirTrust {
  const { scope } = input;
  const tmp = scope.tmpRoots.find((root) => isUnder(input.cwd, root));
  if (tmp !== undefined && scope.privateTmp && !scope.layoutRoots.some((root) => isUnder(input.cwd, root))) {
    return {
      trusted: false,
      why: `the working directory ${input.cwd} is in the sandbox's private ${tmp}; the host's directory of that name is another one`,
    };
  }
  let cwd: string;
  try {
    cwd = realpathSync(input.cwd);
  } catch {
    return { trusted: false, why: `the working directory ${input.cwd} does not exist outside the sandbox` };
  }
  const entries = configFilesFor(input.programNames);
  const named = namedPaths(input.argv, cwd, entries);
  for (const file of named.files) {
    if (writableRootOf(scope, file) && entryChangedSince(file, scope.sessionStartMs))
      return {
        trusted: false,
        why: `${file}, which the command names, was created or changed during this session`,
      };
  }
  for (const dir of [cwd, ...named.dirs]) {
    const problem = directoryProblem(dir, entries, scope);
    if (problem) return { trusted: false, why: problem };
  }
  const home = scope.homeDir;
  if (home) {
    for (const entry of entries) {
      for (const name of entry.home ?? []) {
        for (const path of homePaths(home, name, scope.env.XDG_CONFIG_HOME)) {
          if (writableRootOf(scope, path) && entryChangedSince(path, scope.sessionStartMs))
            return {
              trusted: false,
              why: `${path} was created or changed during this session (${entry.why})`,
            };
        }
      }
    }
  }
  return { trusted: true, cwd };
}

function directoryProblem(
  dir: string,
  entries: readonly ProgramConfigFiles[],
  scope: EscalationScope,
): string | undefined {
  const { sessionStartMs } = scope;
  const inRoot = (path: string) => writableRootOf(scope, path) !== undefined;
  const stat = lstatNs(dir);
  if (inRoot(dir) && stat && bornSince(stat, sessionStartMs))
    return `the working directory ${dir} was created during this session`;

  for (const repository of repositoriesAround(dir, scope.env.GIT_DIR)) {
    const gitDir = lstatNs(repository.gitDir);
    if (inRoot(repository.gitDir) && gitDir && bornSince(gitDir, sessionStartMs))
      return `the git directory ${repository.gitDir} was created during this session (git would run what its configuration and hooks name)`;
    for (const entry of gitConfigurationSurface(repository, {
      ...(scope.homeDir ? { homeDir: scope.homeDir } : {}),
      cwd: dir,
    })) {
      if (inRoot(entry.path) && entryChangedSince(entry.path, sessionStartMs))
        return `${entry.path} was created or changed during this session (${entry.why})`;
    }
  }

  for (let at = dir; inRoot(at); at = dirname(at)) {
    for (const entry of entries) {
      for (const name of entry.files) {
        const path = join(at, name);
        if (entryChangedSince(path, sessionStartMs))
          return `${path} was created or changed during this session (${entry.why})`;
      }
    }
    if (dirname(at) === at) break;
  }
  return undefined;
}

/** `~/name`, and for `.config/…` also `$XDG_CONFIG_HOME/…` of the session. */
function homePaths(home: string, name: string, xdgConfigHome: string | undefined): string[] {
  const paths = [join(home, name)];
  if (xdgConfigHome && name.startsWith('.config/'))
    paths.push(join(xdgConfigHome, name.slice('.config/'.length)));
  return paths;
}

/**
 * Directories and files that the program's path options name (`-C dir`, `--directory=dir`, `-fFILE`),
 * each resolved against the one before (`git -C a -C b` works in `a/b`) and the working directory.
 */
function namedPaths(
  argv: readonly string[],
  cwd: string,
  entries: readonly ProgramConfigFiles[],
): { dirs: string[]; files: string[] } {
  const options = new Set(entries.flatMap((entry) => entry.pathOptions ?? []));
  const dirs: string[] = [];
  const files: string[] = [];
  let base = cwd;
  const take = (value: string) => {
    for (const path of new Set([resolve(base, value), resolve(cwd, value)])) {
      const real = canonical(path);
      if (statNs(real)?.isDirectory()) {
        dirs.push(real);
        base = real;
      } else {
        files.push(real);
        dirs.push(canonical(dirname(path)));
      }
    }
  };
  for (let index = 1; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === '--') break;
    for (const option of options) {
      if (option.startsWith('--')) {
        if (arg === option && index + 1 < argv.length) take(argv[++index]!);
        else if (arg.startsWith(`${option}=`)) take(arg.slice(option.length + 1));
        continue;
      }
      // A short option, alone or at the end of a group (`-C dir`, `-sC dir`), or with its value
      // attached (`-Cdir`, `-sCdir`). Reading too much here only checks more places.
      if (arg.startsWith('--') || !arg.startsWith('-')) continue;
      const at = arg.indexOf(option[1]!, 1);
      if (at < 0) continue;
      if (at === arg.length - 1) {
        if (index + 1 < argv.length) take(argv[index + 1]!);
      } else take(arg.slice(at + 1));
    }
  }
  return { dirs: [...new Set(dirs)], files: [...new Set(files)] };
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
