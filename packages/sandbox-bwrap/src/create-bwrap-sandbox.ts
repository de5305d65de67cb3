import { spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import {
  InvalidArgumentsError,
  isAbsolutePath,
  type LaunchPlan,
  MissingCommandLineError,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxCapability,
  type SandboxProbe,
  SandboxUnavailableError,
} from '@ux/protocol/core';
import {
  createProcessRuntimeDir,
  ensureUxRuntimeRoot,
  runtimeDirPid,
  uxRuntimeRoot,
  uxRuntimeRoots,
} from '@ux/protocol-utils';
import { planBwrap, type SeccompFilterKind } from './bwrap-plan.js';
import { classifyBwrapDenial } from './classify-bwrap-denial.js';
import { findGitTemplateDir, trackCreatedRepositories } from './created-repositories.js';
import { findBwrap } from './find-bwrap.js';
import { guardedLaunchPlan } from './guarded-launch-plan.js';
import { checkedNativeBinary } from './native-path.js';
import { createPathGuard, type PathGuard } from './path-guard.js';
import { planFsView } from './plan-fs-view.js';
import { bwrapFeatures, probeBwrapRun } from './probe-bwrap.js';
import { readProbeCache, writeProbeCache } from './probe-cache.js';
import { buildSeccompProgram, hostSeccompArch } from './seccomp/seccomp-program.js';

export interface BwrapSandboxSettings {
  /** Absolute path of bwrap; default the first `bwrap` on PATH outside the working directory. */
  bwrapPath?: string;
  /** Whose start-up files are protected when they lie inside a writable root; default the user's home. */
  homeDir?: string;
  /**
   * A file to remember a successful probe in (per bwrap binary, kernel and user), so that a host that
   * starts often (a CLI) skips the three probe processes. Failures are never remembered. Default: none.
   */
  probeCacheFile?: string;
  /**
   * Where a protected path that a command created is moved when the host takes it away (a missing
   * `.codex` or `.git/commondir`, say). Default: none, and such paths are removed. The CLI uses
   * `$UX_HOME/quarantine`. Masked inside the sandbox wherever a command could see it.
   */
  quarantineDir?: string;
}

interface HostFiles {
  /** This backend's runtime directory: `<runtime root>/bwrap-<pid>-<random>` (0700, canonical). */
  dir: string;
  /** An empty file with mode 000, bound over deny-read files. */
  denied: string;
  /** The session's private `/tmp` (0700), bound at `/tmp` when the policy asks for it. */
  tmp: string;
}

interface Ready {
  bwrapPath: string;
  version: string;
  disableUserns: boolean;
  argv0: boolean;
  files: HostFiles;
  execShim: string;
  guardBinary: string;
  guard: PathGuard;
  /** The seccomp program for each kind of filter, assembled on first use and kept in memory. */
  program(kind: SeccompFilterKind): Uint8Array;
  /** The sweep of runtime directories of ux processes that are gone. */
  swept: Promise<void>;
  /** Removes the runtime directory when this process exits (unregistered by `close()`). */
  onExit: () => void;
}

/**
 * What bwrap's plans enforce wherever its probe passes: writes only in the writable roots (a mount
 * namespace), protected names bound read-only or taken away by the path guard, deny-read and ux's
 * hidden directories masked, the network off or only through the host's proxy (a network namespace and
 * the seccomp filter), the listed unix sockets and no other, a private `/tmp`, and a pid namespace with a
 * private `/proc` (host processes cannot be seen, signalled or traced). Not resource limits.
 */
export const BWRAP_ENFORCES: readonly SandboxCapability[] = [
  'write_limits',
  'protected_names',
  'read_deny',
  'network_off',
  'network_by_domain',
  'unix_socket_control',
  'private_tmp',
  'process_isolation',
];

/** The bwrap backend; `close()` ends its path guard and removes its runtime directory. */
export type BwrapSandbox = SandboxBackend & { close(): Promise<void> };

/**
 * The Linux backend: bubblewrap with a seccomp filter generated in TypeScript. Create one per host and
 * hand it to `createSandboxRegistry({ bwrap: createBwrapSandbox() })`. One backend is one session: its
 * commands share one private `/tmp` (when the policy asks for one) until `close()`.
 */
export function createBwrapSandbox(settings: BwrapSandboxSettings = {}): BwrapSandbox {
  let ready: Promise<Ready | (SandboxProbe & { available: false })> | undefined;
  // Repositories commands create are checked after each command and protected from then on.
  const repositories = trackCreatedRepositories({ startedAt: Date.now() });

  const prepare = () => {
    ready ??= (async () => {
      if (process.platform !== 'linux') {
        return {
          available: false as const,
          reason: `not on this platform (${process.platform}); bubblewrap is Linux only`,
          fix: 'use the sandbox backend of this platform',
        };
      }
      const arch = hostSeccompArch();
      if (!arch) {
        return {
          available: false as const,
          reason: `no seccomp filter for the ${process.arch} architecture`,
          fix: 'run on x86_64 or aarch64',
        };
      }
      const found = findBwrap({ configured: settings.bwrapPath, path: process.env.PATH, cwd: process.cwd() });
      if ('reason' in found) {
        return {
          available: false as const,
          reason: found.reason,
          fix:
            settings.bwrapPath === undefined
              ? 'install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap), or set [sandbox.bwrap] path in config.toml to the absolute path of bwrap'
              : 'set [sandbox.bwrap] path in config.toml to the absolute path of an installed bwrap (command -v bwrap), or remove it to use the one on PATH',
        };
      }
      // Host programs by their canonical paths, resolved once: the launcher, the guard and bwrap run
      // outside the sandbox, and a symbolic link on the way (pnpm's node_modules) that a command could
      // replace must not decide which program the next launch runs. Plans pin them read-only.
      let execShim: string;
      let guardBinary: string;
      let bwrapPath: string;
      try {
        execShim = realpathSync(checkedNativeBinary('ux-sandbox-exec'));
        guardBinary = realpathSync(checkedNativeBinary('ux-path-guard'));
        bwrapPath = realpathSync(found.path);
      } catch (error) {
        if (!SandboxUnavailableError.isInstance(error)) throw error;
        return { available: false as const, reason: error.reason, fix: error.fix };
      }
      // Most hosts only ever use one or two of the filters; each costs a millisecond or two to assemble.
      const programs = new Map<string, Uint8Array>();
      const program = ({ network, superviseConnect }: SeccompFilterKind) => {
        const key = `${network}${superviseConnect ? '-supervised' : ''}`;
        let built = programs.get(key);
        if (!built) {
          built = buildSeccompProgram(arch, network, { superviseConnect });
          programs.set(key, built);
        }
        return built;
      };
      const cached = settings.probeCacheFile ? readProbeCache(settings.probeCacheFile, bwrapPath) : undefined;
      // The start-up checks are independent: run them together (this is on every host's path).
      const [features, failure] = cached
        ? [cached, undefined]
        : await Promise.all([
            bwrapFeatures(bwrapPath),
            probeBwrapRun(bwrapPath, program({ network: 'restricted', superviseConnect: false }), execShim),
          ]);
      if ('reason' in features)
        return { available: false as const, reason: features.reason, fix: 'reinstall bubblewrap' };
      if (failure) return failure as SandboxProbe & { available: false };
      if (settings.probeCacheFile && !cached) writeProbeCache(settings.probeCacheFile, bwrapPath, features);
      let files: HostFiles;
      try {
        files = createHostFiles();
      } catch (error) {
        if (SandboxUnavailableError.isInstance(error))
          return { available: false as const, reason: error.reason, fix: error.fix };
        return {
          available: false as const,
          reason: `cannot create ux's runtime directory: ${(error as Error).message}`,
          fix: `check that this user can write ${uxRuntimeRoot()} (ux's per-user runtime root)`,
        };
      }
      // Made now, not by the guard at its first move: creating it then could itself look like a
      // protected name appearing (`~/.ux` when the home directory is the workspace).
      if (settings.quarantineDir) ensurePrivateDir(settings.quarantineDir);
      // The guard also removes the runtime directory (through descriptors) when this process is killed.
      const gitTemplateDir = findGitTemplateDir();
      const guard = createPathGuard({
        binaryPath: guardBinary,
        ...(settings.quarantineDir ? { quarantineDir: settings.quarantineDir } : {}),
        ...(gitTemplateDir ? { gitTemplateDir } : {}),
        removeOnExit: [files.dir],
      });
      guard.start();
      const onExit = () => removeRuntimeDirSync(execShim, files);
      process.once('exit', onExit);
      const state: Ready = {
        bwrapPath,
        disableUserns: features.disableUserns,
        argv0: features.argv0,
        files,
        version: features.version,
        execShim,
        guardBinary,
        guard,
        program,
        swept: sweepDeadRuntimeDirs(execShim),
        onExit,
      };
      return state;
    })();
    return ready;
  };

  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id: 'bwrap',
    platforms: ['linux'],

    async probe(): Promise<SandboxProbe> {
      const state = await prepare();
      if ('available' in state) return state;
      return {
        available: true,
        version: state.version,
        // The probe ran a real sandbox with these, so reaching here means they work.
        details: {
          bwrapPath: state.bwrapPath,
          argv0: state.argv0,
          disableUserns: state.disableUserns,
          userNamespaces: true,
          seccomp: true,
        },
        // What its plans hold on every host where the probe passes (README: mount namespace, seccomp
        // filter, path guard, pid namespace with a private /proc). No resource limits.
        enforces: BWRAP_ENFORCES,
      };
    },

    async plan(request): Promise<LaunchPlan> {
      if (request.argv.length === 0) throw new MissingCommandLineError();
      if (!isAbsolutePath(request.cwd)) {
        throw new InvalidArgumentsError({
          tool: 'bwrap plan',
          issues: [{ path: 'cwd', message: `must be absolute, got "${request.cwd}"` }],
        });
      }
      const state = await prepare();
      if ('available' in state)
        throw new SandboxUnavailableError({ backend: 'bwrap', reason: state.reason, fix: state.fix });
      const plannedAt = Date.now();
      const policy = repositories.policyFor(request.policy);
      const withRepositories = { ...request, policy };
      const plan = planBwrap(withRepositories, {
        bwrapPath: state.bwrapPath,
        seccompProgram: state.program,
        isSocket,
        deniedFile: state.files.denied,
        execShim: state.execShim,
        // Every runtime root of every ux process (looked at each plan: another ux may have made one
        // since), this backend's own directory, the quarantine.
        privateDirs: [
          ...uxRuntimeRoots(),
          state.files.dir,
          ...(settings.quarantineDir ? [settings.quarantineDir] : []),
        ],
        privateTmp: state.files.tmp,
        hostPrograms: [state.guardBinary, state.bwrapPath],
        fs: planFsView(),
        homeDir: settings.homeDir ?? homedir(),
        disableUserns: state.disableUserns,
      });
      return guardedLaunchPlan(
        { ...plan, cwd: request.cwd, sandboxType: 'bwrap', policy, plannedAt },
        state.guard,
        repositories,
      );
    },

    classifyDenial: classifyBwrapDenial,

    async close() {
      const state = await ready;
      ready = undefined;
      if (!state || 'available' in state) return;
      process.removeListener('exit', state.onExit);
      // The guard removes the runtime directory as it ends; the remover below makes sure of it (the
      // guard may have died). Both go through descriptors: a command of this session may still be
      // swapping things in the private /tmp.
      await state.guard.close();
      await state.swept;
      if (!removeUntouchedRuntimeDir(state.files))
        await removeThroughDescriptors(state.execShim, [state.files.dir]);
    },
  };
}

/** Whether `path` (symbolic links followed) is a Unix socket. */
function isSocket(path: string): boolean {
  try {
    return statSync(path).isSocket();
  } catch {
    return false;
  }
}

/** Creates a directory only this user can use, when it is missing; a failure leaves the guard to remove instead. */
function ensurePrivateDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch {
    // Unwritable: taken-away paths are removed rather than moved.
  }
}

/**
 * The runtime directory of this backend, in the per-user runtime root shared by every ux process
 * (docs/threat-model.md), which every plan of every ux process masks: the deny mask (mode 000) and the
 * session's private `/tmp`. No seccomp program is kept on disk. The other candidate root in `/tmp` is
 * made too (empty, 0700): a root that does not exist when a sandbox starts is not masked in it, and a
 * command that could write `/tmp` could make it first and keep it open for a later ux process.
 */
function createHostFiles(): HostFiles {
  const root = ensureUxRuntimeRoot();
  const fallback = uxRuntimeRoots().at(-1);
  if (fallback && fallback !== root) {
    try {
      ensureUxRuntimeRoot(fallback);
    } catch {
      // Someone else's: it is masked in every sandbox all the same, and this process does not use it.
    }
  }
  const dir = realpathSync(createProcessRuntimeDir('bwrap', root));
  const denied = join(dir, 'denied');
  writeFileSync(denied, '', { mode: 0o000 });
  chmodSync(denied, 0o000);
  const tmp = join(dir, 'tmp');
  mkdirSync(tmp, { mode: 0o700 });
  return { dir, denied, tmp };
}

/**
 * Removes `paths` with `ux-sandbox-exec --remove`: each directory opened without following a link,
 * relative to its parent's descriptor, and emptied through its own (never `fs.rmSync(recursive)`, which
 * walks paths: a command that swaps a directory for a link mid-removal would have it delete what the
 * link points to). Resolves with what it could not remove (empty when everything is gone).
 */
export function removeThroughDescriptors(execShim: string, paths: readonly string[]): Promise<string> {
  if (paths.length === 0) return Promise.resolve('');
  return new Promise((resolve) => {
    const child = spawn(execShim, ['--remove', ...paths], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.on('error', (error) => resolve(`${execShim}: ${error.message}`));
    child.on('close', () => resolve(stderr.trim()));
  });
}

/**
 * Removes the runtime directory at once when its private `/tmp` is empty (most sessions never write
 * there): the mask file, then each directory with `rmdir`, none of which follows a link. Only the
 * private `/tmp` was ever in a command's reach (as `/tmp`, a mount point it cannot rename), and an
 * `rmdir` of it fails when anything is inside. False when something is left for the remover.
 */
function removeUntouchedRuntimeDir(files: HostFiles): boolean {
  const attempt = (remove: () => void) => {
    try {
      remove();
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'ENOENT';
    }
  };
  attempt(() => unlinkSync(files.denied));
  return attempt(() => rmdirSync(files.tmp)) && attempt(() => rmdirSync(files.dir));
}

/** Removes the runtime directory while this process exits (synchronously). */
function removeRuntimeDirSync(execShim: string, files: HostFiles): void {
  if (removeUntouchedRuntimeDir(files)) return;
  try {
    spawnSync(execShim, ['--remove', files.dir], { stdio: 'ignore', timeout: 10_000 });
  } catch {
    // The guard removes it too.
  }
}

/**
 * Removes the runtime directories that ux processes which are gone left in the runtime roots (killed
 * before they could clean up, their guard killed too), through descriptors. A directory whose pid is
 * alive (or belongs to a process this user cannot signal) is kept; a root that is not this user's
 * private directory is not touched.
 */
export async function sweepDeadRuntimeDirs(execShim: string): Promise<void> {
  const dead: string[] = [];
  for (const root of uxRuntimeRoots()) {
    let names: string[];
    try {
      const stat = lstatSync(root);
      if (!stat.isDirectory() || stat.uid !== process.getuid?.() || (stat.mode & 0o077) !== 0) continue;
      names = readdirSync(root);
    } catch {
      continue;
    }
    for (const name of names) {
      const pid = runtimeDirPid(name);
      if (pid !== undefined && pid !== process.pid && !isAlive(pid)) dead.push(join(root, name));
    }
  }
  await removeThroughDescriptors(execShim, dead);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
