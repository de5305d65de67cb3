import { dirname, join, resolve } from 'node:path';
import { isUnder } from '@ux/protocol-utils';
import { type EscalationScope, writableRootOf } from './escalation-scope.js';
import { gitConfigurationSurface, repositoriesAround } from './git-repository-surface.js';
import { canonicalPath, type PinnedDirectory, pinDirectory, type Reach } from './pinned-directory.js';
import { configFilesFor, type ProgramConfigFiles } from './program-config-files.js';
import { resolvePath } from './program-trust.js';
import { bornSince, entryChangedSince, lstatNs, statNs } from './session-changes.js';

/**
 * The verdict, with the working directory the checks looked at, pinned (`pin`): the caller owns it and
 * must `release()` it, or hand it to the broker with the escalation (which enters that directory or
 * refuses), then release it once the broker has.
 */
export type WorkdirTrust =
  | {
      trusted: true;
      /** The working directory the checks looked at (canonical): where the program should run. */
      cwd: string;
      pin: PinnedDirectory;
    }
  | {
      trusted: false;
      /** What the sandbox wrote and why it matters, naming the file. */
      why: string;
      /** The directory the checks looked at, when it could be opened. */
      pin?: PinnedDirectory;
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
 * wrote"). The directory is opened once (`pinDirectory`, as `chdir` resolves it) and every check looks
 * at it and the directories above it through their descriptors: a path swapped while the checks run
 * cannot make them look at another directory than the one returned. Untrusted when:
 * - the directory is in the sandbox's private `/tmp` (the host's directory of that name is another one),
 *   or does not exist outside;
 * - it lies in a writable root and was created during the session (birth time, where recorded);
 * - a repository git could use there (`repositoriesAround`) has a configuration surface entry
 *   (`gitConfigurationSurface`) in a writable root that was created or changed during the session, or
 *   its git directory was created during it;
 * - for a program of `PROGRAM_CONFIG_FILES`, one of its files in the directory or above it (while in a
 *   writable root), or in the home directory (when that lies in a writable root), was created or changed
 *   during the session (`configurationProblem`);
 * - a directory on its path lies inside a writable root without being one: the sandbox could rename it
 *   while the program, outside, looks its configuration up by that path (`renamedPathProblem`).
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
  const opened = pinDirectory(input.cwd);
  if (!opened.pinned) {
    const why =
      opened.problem === 'missing'
        ? `the working directory ${input.cwd} does not exist outside the sandbox`
        : opened.problem === 'moved'
          ? `the working directory ${input.cwd} moved while it was being checked`
          : `the working directory ${input.cwd} cannot be opened to be checked (${opened.detail ?? 'unknown error'})`;
    return { trusted: false, why };
  }
  const pin = opened.pinned;
  try {
    const problem = configurationProblem(input, pin) ?? renamedPathProblem(input, pin);
    return problem === undefined
      ? { trusted: true, cwd: pin.path, pin }
      : { trusted: false, why: problem, pin };
  } catch (error) {
    pin.release();
    throw error;
  }
}

/**
 * What the sandbox wrote that the program would read in the pinned directory (the checks of
 * `workdirTrust` after the private `/tmp` one, before `renamedPathProblem`), or undefined. Every file is
 * reached through `pin.reach`: what the directory's path names by now does not matter, only the
 * directory that was opened and the ones that were above it then. `input.cwd` is not read
 * (`pin.path` is the directory's name).
 */
export function configurationProblem(input: WorkdirTrustInput, pin: PinnedDirectory): string | undefined {
  const { scope } = input;
  const { reach } = pin;
  const cwd = pin.path;
  const entries = configFilesFor(input.programNames);
  const named = namedPaths(input.argv, cwd, entries, reach);
  for (const file of named.files) {
    if (writableRootOf(scope, file) && entryChangedSince(reach(file), scope.sessionStartMs))
      return `${file}, which the command names, was created or changed during this session`;
  }
  for (const dir of [cwd, ...named.dirs]) {
    const problem = directoryProblem(dir, entries, scope, reach);
    if (problem) return problem;
  }
  const home = scope.homeDir;
  if (home) {
    for (const entry of entries) {
      for (const name of entry.home ?? []) {
        for (const path of homePaths(home, name, scope.env.XDG_CONFIG_HOME)) {
          if (writableRootOf(scope, path) && entryChangedSince(reach(path), scope.sessionStartMs))
            return `${path} was created or changed during this session (${entry.why})`;
        }
      }
    }
  }
  return undefined;
}

/**
 * Why the program, once started in the pinned directory, could be led elsewhere by name: a directory
 * on the working directory's path (or on the path of a directory an option names) that lies inside a
 * writable root and is not a writable root itself. The sandbox can rename or replace such a directory
 * at any moment, and programs find their configuration by the path, not by the directory they were
 * started in (git takes `getcwd()`, looks for `<path>/.git` and changes to the work tree by name; npm
 * and most tools walk up the path the same way): while a sandboxed process still runs, the name can
 * lead to a directory nobody checked, which the broker's comparison at the start cannot see. A
 * writable root itself is no such name (the sandbox binds it at its path, and a mount point cannot be
 * renamed), nor is a directory the sandbox cannot write.
 */
export function renamedPathProblem(input: WorkdirTrustInput, pin: PinnedDirectory): string | undefined {
  // What the sandbox can rename on the host: the writable roots of its layouts (without a private /tmp
  // they hold /tmp and $TMPDIR when the policy grants them; with one, the sandbox renames only its own
  // directory of that name). An entry is renamable when a writable root holds it and it is not one.
  const roots = input.scope.layoutRoots;
  const holder = (entry: string) =>
    roots.includes(entry) ? undefined : roots.find((root) => root !== entry && isUnder(entry, root));
  const why = (root: string) =>
    `lies inside ${root}, where the sandbox can rename or replace it while the program runs; outside, the program would find its configuration by that name, which could lead to a directory nobody checked (only ${root} itself, or a directory the sandbox cannot write, runs outside)`;
  for (let at = pin.path; ; at = dirname(at)) {
    const root = holder(at);
    if (root !== undefined)
      return `${at === pin.path ? `the working directory ${at}` : `${at}, on the way to the working directory ${pin.path},`} ${why(root)}`;
    if (dirname(at) === at) break;
  }
  // A path an option names is walked by the program itself, entry by entry, links followed: every
  // directory and link on that walk must be out of the sandbox's reach (a file named there may be
  // rewritten anyway: what changes inside a directory after the check is not covered).
  const entries = configFilesFor(input.programNames);
  for (const route of namedPaths(input.argv, pin.path, entries, pin.reach).routes) {
    const walk = resolvePath(route.path);
    const visited = 'problem' in walk ? [] : walk.visited;
    const isDir = 'problem' in walk ? false : statNs(walk.real)?.isDirectory() === true;
    for (const entry of isDir ? visited : visited.slice(0, -1)) {
      const root = holder(entry);
      if (root !== undefined)
        return `${entry}, on the way to ${route.value} (which the command names), ${why(root)}`;
    }
  }
  return undefined;
}

function directoryProblem(
  dir: string,
  entries: readonly ProgramConfigFiles[],
  scope: EscalationScope,
  reach: Reach,
): string | undefined {
  const { sessionStartMs } = scope;
  const inRoot = (path: string) => writableRootOf(scope, path) !== undefined;
  const stat = lstatNs(reach(dir));
  if (inRoot(dir) && stat && bornSince(stat, sessionStartMs))
    return `the working directory ${dir} was created during this session`;

  for (const repository of repositoriesAround(dir, scope.env.GIT_DIR, reach)) {
    const gitDir = lstatNs(reach(repository.gitDir));
    if (inRoot(repository.gitDir) && gitDir && bornSince(gitDir, sessionStartMs))
      return `the git directory ${repository.gitDir} was created during this session (git would run what its configuration and hooks name)`;
    for (const entry of gitConfigurationSurface(repository, {
      ...(scope.homeDir ? { homeDir: scope.homeDir } : {}),
      cwd: dir,
      reach,
    })) {
      if (inRoot(entry.path) && entryChangedSince(reach(entry.path), sessionStartMs))
        return `${entry.path} was created or changed during this session (${entry.why})`;
    }
  }

  for (let at = dir; inRoot(at); at = dirname(at)) {
    for (const entry of entries) {
      for (const name of entry.files) {
        const path = join(at, name);
        if (entryChangedSince(reach(path), sessionStartMs))
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
  reach: Reach,
): { dirs: string[]; files: string[]; routes: Route[] } {
  const options = new Set(entries.flatMap((entry) => entry.pathOptions ?? []));
  const dirs: string[] = [];
  const files: string[] = [];
  const routes: Route[] = [];
  let base = cwd;
  const take = (value: string) => {
    // As the program will resolve it: from `/`, or from the directory it is in then (`..` after a link
    // goes up from where the link led, so the value is not normalized).
    for (const from of new Set([base, cwd]))
      routes.push({ path: value.startsWith('/') ? value : `${from}/${value}`, value });
    for (const path of new Set([resolve(base, value), resolve(cwd, value)])) {
      const real = canonical(path, reach);
      if (statNs(reach(real))?.isDirectory()) {
        dirs.push(real);
        base = real;
      } else {
        files.push(real);
        dirs.push(canonical(dirname(path), reach));
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
  return { dirs: [...new Set(dirs)], files: [...new Set(files)], routes };
}

/** A path an option names, as written (`value`) and as the program will walk it (`path`). */
interface Route {
  path: string;
  value: string;
}

/** The canonical path of what `path` names (reached through `reach`), or `path` when nothing is there. */
function canonical(path: string, reach: Reach): string {
  return canonicalPath(path, reach) ?? path;
}
