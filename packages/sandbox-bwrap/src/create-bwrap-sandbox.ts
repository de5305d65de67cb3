import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
  type SandboxProbe,
  SandboxUnavailableError,
} from '@ux/protocol/core';
import { planBwrap } from './bwrap-plan.js';
import { classifyBwrapDenial } from './classify-bwrap-denial.js';
import { findBwrap } from './find-bwrap.js';
import { MountPointRegistry } from './mount-point-registry.js';
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
}

interface HostFiles {
  dir: string;
  /** The filter file for a network policy, written when first asked for. */
  seccomp(network: 'restricted' | 'enabled'): string;
  denied: string;
  empty: string;
}

interface Ready {
  bwrapPath: string;
  shell: string;
  version: string;
  disableUserns: boolean;
  argv0: boolean;
  files: HostFiles;
}

/**
 * The Linux backend: bubblewrap with a seccomp filter generated in TypeScript. Create one per host and
 * hand it to `createSandboxRegistry({ bwrap: createBwrapSandbox() })`.
 */
export function createBwrapSandbox(settings: BwrapSandboxSettings = {}): SandboxBackend {
  const mounts = new MountPointRegistry();
  let ready: Promise<Ready | (SandboxProbe & { available: false })> | undefined;

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
          fix: 'install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap) or set bwrapPath',
        };
      }
      const files = writeHostFiles(arch);
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
            probeBwrapRun(found.path, files.seccomp('restricted'), shell),
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
      const plan = planBwrap(request, {
        bwrapPath: state.bwrapPath,
        shell: state.shell,
        seccompFile: state.files.seccomp(request.policy.network),
        deniedFile: state.files.denied,
        emptyFile: state.files.empty,
        fs: nodeFsView(),
        homeDir: settings.homeDir ?? homedir(),
        disableUserns: state.disableUserns,
      });
      mounts.acquire(plan.mountTargets);
      let released = false;
      return {
        argv: plan.argv,
        cwd: request.cwd,
        env: plan.env,
        sandboxType: 'bwrap',
        enforcement: { fileSystem: 'enforced', network: 'enforced', notes: plan.notes },
        cleanup: async () => {
          if (released) return;
          released = true;
          mounts.release(plan.mountTargets);
        },
      };
    },

    classifyDenial: classifyBwrapDenial,
  };
}

/**
 * The seccomp programs and the deny mask live in a private directory (0700) for the life of the host:
 * a shared, predictable path in /tmp could be swapped by another user.
 */
function writeHostFiles(arch: 'x64' | 'arm64'): HostFiles {
  const dir = mkdtempSync(join(tmpdir(), 'ux-bwrap-'));
  chmodSync(dir, 0o700);
  // Most hosts only ever use one of the two filters; each costs a millisecond or two to assemble.
  const written = new Map<string, string>();
  const files: HostFiles = {
    dir,
    seccomp(network) {
      let path = written.get(network);
      if (!path) {
        path = join(dir, network === 'restricted' ? 'seccomp-network-off.bpf' : 'seccomp-network-on.bpf');
        writeFileSync(path, buildSeccompProgram(arch, network), { mode: 0o600 });
        written.set(network, path);
      }
      return path;
    },
    denied: join(dir, 'denied'),
    empty: join(dir, 'empty'),
  };
  writeFileSync(files.denied, '', { mode: 0o000 });
  chmodSync(files.denied, 0o000);
  writeFileSync(files.empty, '', { mode: 0o444 });
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return files;
}
