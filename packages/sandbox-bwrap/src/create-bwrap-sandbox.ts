import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  InvalidArgumentsError,
  isAbsolutePath,
  type LaunchPlan,
  MissingCommandLineError,
  nodeFsView,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxNotice,
  type SandboxProbe,
  SandboxUnavailableError,
} from '@ux/protocol/core';
import { planBwrap, type SeccompFilterKind } from './bwrap-plan.js';
import { classifyBwrapDenial } from './classify-bwrap-denial.js';
import { findGitTemplateDir, trackCreatedRepositories } from './created-repositories.js';
import { findBwrap } from './find-bwrap.js';
import { checkedNativeBinary } from './native-path.js';
import { createPathGuard, type PathGuard } from './path-guard.js';
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
   * `$UX_HOME/quarantine`. Masked inside the sandbox when a writable root holds it.
   */
  quarantineDir?: string;
}

interface HostFiles {
  dir: string;
  /** The filter file for a network mode (and a supervised connect), written when first asked for. */
  seccomp(kind: SeccompFilterKind): string;
  denied: string;
}

interface Ready {
  bwrapPath: string;
  shell: string;
  version: string;
  disableUserns: boolean;
  argv0: boolean;
  files: HostFiles;
  execShim: string;
  guard: PathGuard;
}

/** The bwrap backend; `close()` ends its path guard and removes its private files. */
export type BwrapSandbox = SandboxBackend & { close(): Promise<void> };

/**
 * The Linux backend: bubblewrap with a seccomp filter generated in TypeScript. Create one per host and
 * hand it to `createSandboxRegistry({ bwrap: createBwrapSandbox() })`.
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
              ? 'install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap), or set bwrap_path in config.toml to the absolute path of bwrap'
              : 'set bwrap_path in config.toml to the absolute path of an installed bwrap (command -v bwrap), or remove it to use the one on PATH',
        };
      }
      let execShim: string;
      let guardBinary: string;
      try {
        execShim = checkedNativeBinary('ux-sandbox-exec');
        guardBinary = checkedNativeBinary('ux-path-guard');
      } catch (error) {
        if (!SandboxUnavailableError.isInstance(error)) throw error;
        return { available: false as const, reason: error.reason, fix: error.fix };
      }
      // Made now, not by the guard at its first move: creating it then could itself look like a
      // protected name appearing (`~/.ux` when the home directory is the workspace).
      if (settings.quarantineDir) ensurePrivateDir(settings.quarantineDir);
      const files = writeHostFiles(arch);
      // The guard also removes the host files when this process is killed before it can.
      const gitTemplateDir = findGitTemplateDir();
      const guard = createPathGuard({
        binaryPath: guardBinary,
        ...(settings.quarantineDir ? { quarantineDir: settings.quarantineDir } : {}),
        ...(gitTemplateDir ? { gitTemplateDir } : {}),
        removeOnExit: [files.dir],
      });
      guard.start();
      // bash closes descriptors of any number before bwrap starts; a plain sh only up to 9.
      const shell = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
      const cached = settings.probeCacheFile
        ? readProbeCache(settings.probeCacheFile, found.path)
        : undefined;
      // The three start-up checks are independent: run them together (this is on every host's path).
      const [features, failure] = cached
        ? [cached, undefined]
        : await Promise.all([
            bwrapFeatures(found.path),
            probeBwrapRun(
              found.path,
              files.seccomp({ network: 'restricted', superviseConnect: false }),
              shell,
              execShim,
            ),
          ]);
      if ('reason' in features)
        return { available: false as const, reason: features.reason, fix: 'reinstall bubblewrap' };
      if (failure) return failure as SandboxProbe & { available: false };
      if (settings.probeCacheFile && !cached) writeProbeCache(settings.probeCacheFile, found.path, features);
      const state: Ready = {
        bwrapPath: found.path,
        shell,
        disableUserns: features.disableUserns,
        argv0: features.argv0,
        files,
        version: features.version,
        execShim,
        guard,
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
        version: (state as Ready & { version: string }).version,
        // The probe ran a real sandbox with these, so reaching here means they work.
        details: {
          bwrapPath: state.bwrapPath,
          argv0: state.argv0,
          disableUserns: state.disableUserns,
          userNamespaces: true,
          seccomp: true,
        },
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
        shell: state.shell,
        seccompFile: (kind) => state.files.seccomp(kind),
        isSocket,
        deniedFile: state.files.denied,
        execShim: state.execShim,
        privateDirs: [state.files.dir, ...(settings.quarantineDir ? [settings.quarantineDir] : [])],
        fs: nodeFsView(),
        homeDir: settings.homeDir ?? homedir(),
        disableUserns: state.disableUserns,
      });
      // Notices are kept for listeners that subscribe later; the watch is in place before the plan is
      // returned, so before anything runs under it. A guard that cannot watch fails the plan (closed).
      const notices: SandboxNotice[] = [];
      const listeners = new Set<(notice: SandboxNotice) => void>();
      const watch = await state.guard.watch(plan.guardTargets, (notice) => {
        notices.push(notice);
        for (const listener of listeners) listener(notice);
      });
      return {
        argv: plan.argv,
        cwd: request.cwd,
        env: plan.env,
        sandboxType: 'bwrap',
        enforcement: { fileSystem: 'enforced', network: 'enforced', notes: plan.notes },
        // The sandbox has ended: check the repositories the command created (docs/protected-paths.md).
        cleanup: async () => {
          const scan = repositories.scan(plan.layout, policy, plannedAt);
          await watch.stop({ repositories: scan.checks });
          repositories.remember(scan.workTrees);
        },
        onNotice(listener) {
          for (const notice of notices) listener(notice);
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
      };
    },

    classifyDenial: classifyBwrapDenial,

    async close() {
      const state = await ready;
      ready = undefined;
      if (!state || 'available' in state) return;
      await state.guard.close();
      rmSync(state.files.dir, { recursive: true, force: true });
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
 * The seccomp programs and the deny mask live in a private directory (0700) for the life of the host:
 * a shared, predictable path in /tmp could be swapped by another user.
 */
function writeHostFiles(arch: 'x64' | 'arm64'): HostFiles {
  const dir = mkdtempSync(join(tmpdir(), 'ux-bwrap-'));
  chmodSync(dir, 0o700);
  // Most hosts only ever use one or two of the filters; each costs a millisecond or two to assemble.
  const written = new Map<string, string>();
  const files: HostFiles = {
    dir,
    seccomp({ network, superviseConnect }) {
      const name = `seccomp-${network}${superviseConnect ? '-supervised' : ''}.bpf`;
      let path = written.get(name);
      if (!path) {
        path = join(dir, name);
        writeFileSync(path, buildSeccompProgram(arch, network, { superviseConnect }), { mode: 0o600 });
        written.set(name, path);
      }
      return path;
    },
    denied: join(dir, 'denied'),
  };
  writeFileSync(files.denied, '', { mode: 0o000 });
  chmodSync(files.denied, 0o000);
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return files;
}
