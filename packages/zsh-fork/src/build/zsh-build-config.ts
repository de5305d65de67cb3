/**
 * How the patched zsh is configured: pure values and text transforms, kept apart from the build steps
 * so tests can check them.
 */

/**
 * `./configure` options. The binary must be self-contained and predictable under a sandbox:
 * - `--disable-dynamic`: no module is ever loaded from disk. Modules scripts and rc files commonly
 *   `zmodload` are linked in instead (STATIC_MODULES); nothing depends on a module path that a build
 *   directory, a moved install or a sandboxed command could change.
 * - `--disable-gdbm --disable-pcre --disable-cap`: no optional library the machine may lack.
 * - `--with-tcsetpgrp`: configure's probe needs a controlling terminal, which CI and agents lack;
 *   every supported system has a working `tcsetpgrp`.
 * - `--prefix=<outDir>`: the compiled-in function path points into the install (functions are copied
 *   there), never at another zsh's files.
 */
export function configureArgs(outDir: string, extra: readonly string[] = []): string[] {
  return [
    `--prefix=${outDir}`,
    '--disable-dynamic',
    '--disable-gdbm',
    '--disable-pcre',
    '--disable-cap',
    '--with-tcsetpgrp',
    ...extra,
  ];
}

/**
 * Modules linked into the binary besides zsh's own static set (main, parameter, zutil, zle,
 * completion, datetime, langinfo, terminfo…), so `zmodload` of them works without dynamic loading.
 * Left out on purpose:
 * - `zsh/files`: its builtins (`rm`, `mv`, `ln`, `chmod`, `mkdir`…) would replace the external
 *   commands and bypass the per-exec policy (`zmodload zsh/files; rm -rf x` would never exec `rm`);
 * - `zsh/newuser` (the interactive first-run wizard), `zsh/zftp`, `zsh/curses`, `zsh/attr`,
 *   `zsh/example` and the remaining zle widgets: not needed to run commands, or extra libraries.
 */
export const STATIC_MODULES = [
  'zsh/clone',
  'zsh/mapfile',
  'zsh/mathfunc',
  'zsh/net/socket',
  'zsh/net/tcp',
  'zsh/param/private',
  'zsh/regex',
  'zsh/stat',
  'zsh/system',
  'zsh/watch',
  'zsh/zprof',
  'zsh/zpty',
  'zsh/zselect',
] as const;

/** Modules that must never be linked in (see STATIC_MODULES). */
export const EXCLUDED_MODULES = ['zsh/files'] as const;

/**
 * `config.modules` (written by configure) with STATIC_MODULES switched to `link=static` and
 * EXCLUDED_MODULES to `link=no`. Throws when a listed module is not in the file (another zsh version).
 */
export function withStaticModules(configModules: string): string {
  const lines = configModules.split('\n');
  const set = (name: string, link: 'static' | 'no') => {
    const index = lines.findIndex((line) => line.startsWith(`name=${name} `));
    if (index < 0) throw new Error(`config.modules has no module ${name}`);
    lines[index] = lines[index]!.replace(/ link=\w+/, ` link=${link}`);
  };
  for (const name of STATIC_MODULES) set(name, 'static');
  for (const name of EXCLUDED_MODULES) set(name, 'no');
  return lines.join('\n');
}

/**
 * The function files to install for the linked modules: the `functions=` globs of every module in
 * `config.modules` that is not `link=no`, as zsh's own `make install.fns` selects them (scripts
 * excluded: they belong to the newuser module, which is not linked).
 */
export function functionGlobs(configModules: string): string[] {
  const globs: string[] = [];
  for (const line of configModules.split('\n')) {
    if (line.startsWith('#') || / link=no\b/.test(line)) continue;
    const match = / functions=(.*)$/.exec(line);
    if (!match) continue;
    for (const glob of match[1]!.trim().split(/\s+/))
      if (glob && !glob.startsWith('Scripts/')) globs.push(glob);
  }
  return globs;
}

export interface FailureAdvice {
  reason: 'missing_tool' | 'missing_headers' | 'configure_failed' | 'make_failed';
  problem: string;
  fix: string;
}

export const INSTALL_BUILD_TOOLS_FIX =
  'install a C compiler, make and the ncurses headers: apt-get install build-essential libncurses-dev (Fedora: dnf install gcc make ncurses-devel; macOS: xcode-select --install)';

/** What a failed configure or make means, from the last lines of its output. */
export function adviseBuildFailure(step: 'configure' | 'make', tail: readonly string[]): FailureAdvice {
  const text = tail.join('\n');
  if (
    /no acceptable C compiler|C compiler cannot create executables|cc: (command )?not found|gcc: (command )?not found/i.test(
      text,
    )
  )
    return {
      reason: 'missing_tool',
      problem: `${step} found no working C compiler`,
      fix: INSTALL_BUILD_TOOLS_FIX,
    };
  if (/terminal handling library|(curses|ncurses|term|termcap)\.h: No such file/i.test(text))
    return {
      reason: 'missing_headers',
      problem: `${step} failed: the ncurses development files (headers and library) are missing`,
      fix: 'install them: apt-get install libncurses-dev (Fedora: dnf install ncurses-devel)',
    };
  if (/(autoconf|autoheader): (command )?not found/i.test(text))
    return {
      reason: 'missing_tool',
      problem: `${step} wants to regenerate configure, which needs autoconf`,
      fix: 'install it (apt-get install autoconf), or pass a release tarball whose configure is already generated',
    };
  if (step === 'configure')
    return {
      reason: 'configure_failed',
      problem: "zsh's ./configure failed",
      fix: 'read the lines below; the usual fix is: apt-get install build-essential libncurses-dev',
    };
  return {
    reason: 'make_failed',
    problem: 'compiling zsh (make) failed',
    fix: 'read the lines below; the usual fix is: apt-get install build-essential libncurses-dev',
  };
}
