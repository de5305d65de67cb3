import {
  accessSync,
  chmodSync,
  constants,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { BUILD_INFO_FILE, type ZshForkBuildInfo } from './build-info.js';
import { fetchDebianZshSource } from './fetch-debian-zsh-source.js';
import { runStep, type StepResult } from './run-step.js';
import { SOURCE_KINDS_TEXT, sourceKind } from './source-kind.js';
import { verifyZshFork } from './verify-zsh-fork.js';
import {
  adviseBuildFailure,
  configureArgs,
  functionGlobs,
  INSTALL_BUILD_TOOLS_FIX,
  withStaticModules,
} from './zsh-build-config.js';
import { passSourceFix } from './zsh-download-hint.js';
import { ZshForkBuildError } from './zsh-fork-build-error.js';
import { zshForkPatch } from './zsh-fork-patch.js';

export interface BuildZshForkOptions {
  /**
   * A zsh 5.9 source directory, a release tarball (.tar.xz/.tar.gz/.tar.bz2) or a Debian `.dsc`.
   * Without it, Debian's source package is downloaded from the system's mirror
   * (`fetchDebianZshSource`; apt's configuration is only read).
   */
  source?: string;
  /** Where to install: `bin/zsh`, `share/zsh/…` (functions) and `BUILD_INFO.json`. */
  outDir: string;
  /** Where to unpack and build; default a temp directory, removed afterwards. Kept when given. */
  workDir?: string;
  /** Where Debian's source package is downloaded to, and found again; default inside workDir. */
  sourceCacheDir?: string;
  /** Every line of output of the steps (download, tar, patch, configure, make). */
  onLog?: (line: string) => void;
  /** One short line per step ("configuring", "compiling (make -j2)"…). */
  onStep?: (step: string) => void;
  signal?: AbortSignal;
  /** Parallel compile jobs; default the available cores, at most 8. */
  jobs?: number;
  /** More `./configure` options, after ux's own. */
  extraConfigureArgs?: string[];
}

export interface ZshForkBuild {
  /** The installed patched zsh: `<outDir>/bin/zsh`. */
  zshPath: string;
  outDir: string;
  info: ZshForkBuildInfo;
}

/**
 * Builds zsh 5.9 with the exec-wrapper patch and installs it into `outDir`: gets the source, applies
 * the patch, configures (self-contained: modules linked in, no dynamic loading), compiles, runs the
 * smoke test on the fresh binary, then installs `bin/zsh` atomically (temp name, rename) and writes
 * `BUILD_INFO.json`. A binary that fails the smoke test is never installed. Throws
 * `ZshForkBuildError`, whose message says what failed and what to do.
 */
export async function buildZshFork(options: BuildZshForkOptions): Promise<ZshForkBuild> {
  const outDir = resolve(options.outDir);
  const step = (text: string) => options.onStep?.(text);
  const log = (line: string) => options.onLog?.(line);
  const patch = zshForkPatch();
  checkTools(['make', 'patch', 'tar']);
  checkCompiler();

  const ownWorkDir = options.workDir === undefined;
  const workDir = ownWorkDir ? mkdtempSync(join(tmpdir(), 'ux-zsh-fork-build-')) : resolve(options.workDir!);
  mkdirSync(workDir, { recursive: true });
  const run = async (
    command: string,
    args: string[],
    cwd: string,
    env?: NodeJS.ProcessEnv,
  ): Promise<StepResult> => {
    log(`$ ${[command, ...args].join(' ')}`);
    const result = await runStep(command, args, {
      cwd,
      // English messages: adviseBuildFailure reads them.
      env: env ?? { ...process.env, LC_ALL: 'C' },
      onLine: log,
      signal: options.signal,
      tailLines: 40,
    });
    if (result.aborted || options.signal?.aborted)
      throw new ZshForkBuildError({
        reason: 'aborted',
        problem: 'the zsh build was cancelled',
        fix: 'run it again',
      });
    return result;
  };

  try {
    // 1. The source tree.
    let sourceLabel: string;
    let tree: string;
    if (options.source === undefined) {
      step("fetching Debian's zsh source package from the system's mirror");
      const dsc = await fetchDebianZshSource({
        downloadDir: options.sourceCacheDir ?? join(workDir, 'download'),
        onLine: log,
        signal: options.signal,
      });
      tree = await unpackDsc(dsc, workDir, run);
      sourceLabel = `Debian's zsh source package (${dsc})`;
    } else {
      const source = resolve(options.source);
      let isDirectory: boolean;
      try {
        isDirectory = statSync(source).isDirectory();
      } catch {
        throw new ZshForkBuildError({
          reason: 'source_not_found',
          problem: `the zsh source ${source} does not exist`,
          fix: `pass ${SOURCE_KINDS_TEXT}: ${passSourceFix()}`,
          path: source,
        });
      }
      const kind = sourceKind(source, isDirectory);
      sourceLabel = source;
      step(`unpacking ${source}`);
      if (kind === 'directory') {
        tree = join(workDir, 'zsh-src');
        rmSync(tree, { recursive: true, force: true });
        // A copy: the build never writes into the person's own tree.
        cpSync(source, tree, { recursive: true, preserveTimestamps: true });
      } else if (kind === 'tarball') tree = await unpackTarball(source, workDir, run);
      else if (kind === 'debian-dsc') tree = await unpackDsc(source, workDir, run);
      else
        throw new ZshForkBuildError({
          reason: 'source_unsupported',
          problem: `${source} is not ${SOURCE_KINDS_TEXT}`,
          fix: passSourceFix(),
          path: source,
        });
      if (!existsSync(join(tree, 'Src', 'exec.c')))
        throw new ZshForkBuildError({
          reason: 'source_unsupported',
          problem: `${source} does not hold zsh's source (no Src/exec.c${kind === 'directory' ? '' : ' in what it unpacks to'})`,
          fix: passSourceFix(),
          path: source,
        });
    }

    // 2. The patch (skipped when the tree already has it, e.g. a directory built before).
    step('applying the exec-wrapper patch');
    // `--force`, not `--batch`: with --batch, patch takes a patch that is not applied yet for a
    // reversed one, ignores -R and reports success.
    const reverse = await run(
      'patch',
      ['-p1', '-R', '--dry-run', '--force', '--silent', '-i', patch.path],
      tree,
    );
    if (reverse.code === 0) log('the patch is already applied');
    else {
      const dry = await run('patch', ['-p1', '--forward', '--dry-run', '--batch', '-i', patch.path], tree);
      if (dry.code !== 0)
        throw new ZshForkBuildError({
          reason: 'patch_failed',
          problem: `the exec-wrapper patch does not apply to ${sourceLabel} (it is written for zsh 5.9's Src/exec.c)`,
          fix: `use zsh 5.9's source: ${passSourceFix()}`,
          path: patch.path,
          logTail: dry.tail.join('\n'),
        });
      await run('patch', ['-p1', '--forward', '--batch', '-i', patch.path], tree);
    }

    // 3. configure.
    if (!existsSync(join(tree, 'configure'))) {
      step('generating configure (Util/preconfig)');
      const preconfig = await run('sh', ['./Util/preconfig'], tree);
      if (preconfig.code !== 0)
        throw new ZshForkBuildError({
          reason: 'missing_tool',
          problem: 'this zsh source has no configure script, and generating it (./Util/preconfig) failed',
          fix: 'install autoconf (apt-get install autoconf), or pass a release tarball, which ships configure',
          logTail: preconfig.tail.join('\n'),
        });
    } else settleGeneratedFiles(tree);
    const args = configureArgs(outDir, options.extraConfigureArgs);
    step('configuring');
    const configure = await run('sh', ['./configure', ...args], tree);
    if (configure.code !== 0) {
      const advice = adviseBuildFailure('configure', configure.tail);
      throw new ZshForkBuildError({ ...advice, logTail: configure.tail.join('\n') });
    }
    const modulesFile = join(tree, 'config.modules');
    writeFileSync(modulesFile, withStaticModules(readFileSync(modulesFile, 'utf8')));

    // 4. make.
    const jobs = options.jobs ?? Math.min(availableParallelism(), 8);
    step(`compiling (make -j${jobs})`);
    const make = await run('make', [`-j${jobs}`], tree);
    if (make.code !== 0) {
      const advice = adviseBuildFailure('make', make.tail);
      throw new ZshForkBuildError({ ...advice, logTail: make.tail.join('\n') });
    }
    const built = join(tree, 'Src', 'zsh');

    // 5. The smoke test, before anything is installed.
    step('running the smoke test');
    const verified = await verifyZshFork(built);
    if (!verified.ok)
      throw new ZshForkBuildError({
        reason: 'verify_failed',
        problem: `the freshly built zsh failed the exec-wrapper smoke test: ${verified.reason}`,
        fix: 'nothing was installed; check that the source is zsh 5.9 and run the build again with --verbose',
      });

    // 6. Install: functions, then the binary by rename, then the build info.
    step(`installing into ${outDir}`);
    const info: ZshForkBuildInfo = {
      zshVersion: verified.version,
      patchSha256: patch.sha256,
      builtAt: new Date().toISOString(),
      source: sourceLabel,
      configureArgs: args,
      platform: process.platform,
      arch: process.arch,
    };
    try {
      installFunctions(tree, join(outDir, 'share', 'zsh', verified.version, 'functions'));
      mkdirSync(join(outDir, 'share', 'zsh', 'site-functions'), { recursive: true });
      const zshPath = join(outDir, 'bin', 'zsh');
      writeAtomically(zshPath, (temp) => copyFileSync(built, temp), 0o755);
      writeAtomically(
        join(outDir, BUILD_INFO_FILE),
        (temp) => writeFileSync(temp, `${JSON.stringify(info, null, 2)}\n`),
        0o644,
      );
      return { zshPath, outDir, info };
    } catch (error) {
      throw new ZshForkBuildError({
        reason: 'install_failed',
        problem: `could not install into ${outDir}: ${(error as Error).message}`,
        fix: 'pass an output directory you can write to: --out DIR',
        path: outDir,
        cause: error,
      });
    }
  } finally {
    if (ownWorkDir) rmSync(workDir, { recursive: true, force: true });
  }
}

type Run = (command: string, args: string[], cwd: string) => Promise<StepResult>;

async function unpackTarball(tarball: string, workDir: string, run: Run): Promise<string> {
  const into = join(workDir, 'unpacked');
  rmSync(into, { recursive: true, force: true });
  mkdirSync(into);
  const result = await run('tar', ['-xf', tarball], into);
  if (result.code !== 0)
    throw new ZshForkBuildError({
      reason: 'source_unsupported',
      problem: `could not unpack ${tarball}`,
      fix: `check that it is a complete zsh 5.9 tarball (for .tar.xz, xz must be installed: apt-get install xz-utils); ${passSourceFix()}`,
      path: tarball,
      logTail: result.tail.join('\n'),
    });
  return singleTopDirectory(into, tarball);
}

/** Debian's source package: `dpkg-source -x` (Debian's patches applied), else the orig tarball alone. */
async function unpackDsc(dsc: string, workDir: string, run: Run): Promise<string> {
  const tree = join(workDir, 'zsh-debian');
  rmSync(tree, { recursive: true, force: true });
  if (onPath('dpkg-source')) {
    const result = await run('dpkg-source', ['--no-check', '-x', dsc, tree], workDir);
    if (result.code === 0) return tree;
  }
  const dir = dirname(dsc);
  const orig = readdirSync(dir).find((name) => /^zsh_[^_]+\.orig\.tar\.\w+$/.test(name));
  if (!orig)
    throw new ZshForkBuildError({
      reason: 'source_unsupported',
      problem: `could not unpack ${dsc}: dpkg-source failed or is missing, and no zsh_*.orig.tar.* lies beside it`,
      fix: `install dpkg-dev (apt-get install dpkg-dev), or: ${passSourceFix()}`,
      path: dsc,
    });
  return unpackTarball(join(dir, orig), workDir, run);
}

function singleTopDirectory(dir: string, from: string): string {
  if (existsSync(join(dir, 'Src', 'exec.c'))) return dir;
  const entries = readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory());
  for (const name of entries) if (existsSync(join(dir, name, 'Src', 'exec.c'))) return join(dir, name);
  throw new ZshForkBuildError({
    reason: 'source_unsupported',
    problem: `${from} does not hold zsh's source (no Src/exec.c in what it unpacks to)`,
    fix: passSourceFix(),
    path: from,
  });
}

/**
 * Gives the shipped generated files (configure, config.h.in) times later than their inputs: a patch
 * to an input (Debian's patch to aczsh.m4) or a copy that lost times would otherwise make `make`
 * rerun autoconf and autoheader, which few machines have.
 */
function settleGeneratedFiles(tree: string): void {
  const base = Date.now() / 1000 - 3600;
  const order = [['configure.ac', 'aclocal.m4', 'aczsh.m4'], ['configure'], ['stamp-h.in'], ['config.h.in']];
  order.forEach((names, index) => {
    for (const name of names) {
      const path = join(tree, name);
      if (existsSync(path)) utimesSync(path, base + index, base + index);
    }
  });
}

/** Copies the linked modules' autoloadable functions flat into `fndir`, as `make install.fns` does. */
function installFunctions(tree: string, fndir: string): void {
  mkdirSync(fndir, { recursive: true });
  const globs = functionGlobs(readFileSync(join(tree, 'config.modules'), 'utf8'));
  for (const glob of globs)
    for (const file of expandGlob(tree, glob)) {
      const text = readFileSync(join(tree, file), 'utf8');
      writeFileSync(join(fndir, file.slice(file.lastIndexOf('/') + 1)), text.replaceAll('@runhelpdir@', ''));
    }
}

/** Files under `root` matching `glob` (only `*` wildcards, segment by segment), relative paths. */
function expandGlob(root: string, glob: string): string[] {
  let paths = [''];
  const segments = glob.split('/');
  segments.forEach((segment, index) => {
    const last = index === segments.length - 1;
    const pattern = new RegExp(`^${segment.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replaceAll('*', '[^/]*')}$`);
    const next: string[] = [];
    for (const base of paths) {
      let names: string[];
      try {
        names = readdirSync(join(root, base));
      } catch {
        continue;
      }
      for (const name of names) {
        if (!pattern.test(name) || name === 'CVS' || (segment.includes('*') && name.startsWith('.')))
          continue;
        const path = base ? `${base}/${name}` : name;
        const isDirectory = statSync(join(root, path)).isDirectory();
        if (last ? !isDirectory : isDirectory) next.push(path);
      }
    }
    paths = next;
  });
  return paths;
}

/** Writes `path` under a temp name beside it, sets its mode, then renames it into place. */
function writeAtomically(path: string, write: (temp: string) => void, mode: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const temp = `${path}.tmp-${process.pid}-${Date.now()}`;
  try {
    write(temp);
    chmodSync(temp, mode);
    renameSync(temp, path);
  } catch (error) {
    rmSync(temp, { force: true });
    throw error;
  }
}

function checkTools(names: readonly string[]): void {
  for (const name of names)
    if (!onPath(name))
      throw new ZshForkBuildError({
        reason: 'missing_tool',
        problem: `${name} is not installed (it is needed to build zsh)`,
        fix:
          name === 'patch'
            ? `install it: apt-get install patch; ${INSTALL_BUILD_TOOLS_FIX}`
            : INSTALL_BUILD_TOOLS_FIX,
      });
}

function checkCompiler(): void {
  const cc = process.env.CC?.split(/\s+/)[0];
  if (cc ? onPath(cc) || existsSync(cc) : onPath('cc') || onPath('gcc') || onPath('clang')) return;
  throw new ZshForkBuildError({
    reason: 'missing_tool',
    problem: cc
      ? `the C compiler $CC=${cc} is not installed`
      : 'no C compiler (cc, gcc or clang) is installed',
    fix: INSTALL_BUILD_TOOLS_FIX,
  });
}

function onPath(name: string): boolean {
  for (const dir of (process.env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    if (!dir) continue;
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      // Not here.
    }
  }
  return false;
}
