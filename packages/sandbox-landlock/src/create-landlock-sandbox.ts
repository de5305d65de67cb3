import { execFile } from 'node:child_process';
import { accessSync, constants, mkdirSync, readFileSync, realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  InvalidArgumentsError,
  isAbsolutePath,
  type LaunchPlan,
  MissingCommandLineError,
  SANDBOX_SPECIFICATION_VERSION,
  type SandboxBackend,
  type SandboxProbe,
  SandboxUnavailableError,
} from '@ux/protocol/core';
import { privateTmpDir, uxRuntimeRoots } from '@ux/protocol-utils';
import {
  buildSeccompProgram,
  checkedNativeBinary,
  createPathGuard,
  findGitTemplateDir,
  guardedLaunchPlan,
  hostSeccompArch,
  type PathGuard,
  planFsView,
  type SeccompNetwork,
  trackCreatedRepositories,
} from '@ux/sandbox-bwrap/linux';
import { classifyLandlockDenial } from './classify-landlock-denial.js';
import { LANDLOCK_BACKEND_ID, LANDLOCK_MIN_ABI, landlockEnforces, planLandlock } from './landlock-plan.js';

export interface LandlockSandboxSettings {
  /** Whose start-up files are protected when they lie inside a writable root; default the user's home. */
  homeDir?: string;
  /**
   * Where a protected path that a command created is moved when the guard takes it away. Default:
   * none, and such paths are removed. Never readable or writable inside the sandbox.
   */
  quarantineDir?: string;
  /** The launcher; default this package's `native/build/ux-landlock-exec`. For tests. */
  launcherPath?: string;
  /**
   * Tests: behave as on a kernel whose Landlock ABI is at most this (what the probe declares, what
   * plans refuse, and the launcher's `--max-abi`), to check what older kernels enforce on this one.
   */
  maxAbi?: number;
}

/** The Landlock backend; `close()` ends its path guard and removes its private /tmp. */
export type LandlockSandbox = SandboxBackend & { close(): Promise<void> };

interface Ready {
  abi: number;
  launcher: string;
  guardBinary: string;
  remover: string;
  guard: PathGuard;
  program(network: SeccompNetwork): Uint8Array;
}

type Unavailable = SandboxProbe & { available: false };

/**
 * The Linux backend without namespaces: Landlock and ux's seccomp filter, applied by
 * `ux-landlock-exec` to itself before it execs the command (no process stays in between). For hosts
 * where bubblewrap cannot start (no user namespaces: containers, hardened kernels). What it enforces
 * depends on the kernel's Landlock ABI (`landlockEnforces`); see the README for what it cannot do.
 */
export function createLandlockSandbox(settings: LandlockSandboxSettings = {}): LandlockSandbox {
  let ready: Promise<Ready | Unavailable> | undefined;
  const repositories = trackCreatedRepositories({ startedAt: Date.now() });
  const tmp = privateTmpDir(undefined, 'landlock', LANDLOCK_BACKEND_ID);

  const prepare = () => {
    ready ??= (async (): Promise<Ready | Unavailable> => {
      if (process.platform !== 'linux')
        return {
          available: false,
          reason: `not on this platform (${process.platform}); Landlock is Linux only`,
          fix: 'use the sandbox backend of this platform',
        };
      const arch = hostSeccompArch();
      if (!arch)
        return {
          available: false,
          reason: `no seccomp filter for the ${process.arch} architecture`,
          fix: 'run on x86_64 or aarch64',
        };
      let launcher: string;
      let guardBinary: string;
      let remover: string;
      try {
        launcher = realpathSync(settings.launcherPath ?? checkedLauncher());
        guardBinary = realpathSync(checkedNativeBinary('ux-path-guard'));
        remover = realpathSync(checkedNativeBinary('ux-sandbox-exec'));
      } catch (error) {
        if (SandboxUnavailableError.isInstance(error))
          return { available: false, reason: error.reason, fix: error.fix };
        return {
          available: false,
          reason: `the launcher cannot be found: ${(error as Error).message}`,
          fix: 'run `pnpm --filter @ux/sandbox-landlock build` (needs a C compiler)',
        };
      }
      const kernelAbi = await launcherAbi(launcher);
      const abi =
        typeof kernelAbi === 'number' && settings.maxAbi !== undefined
          ? Math.min(kernelAbi, settings.maxAbi)
          : kernelAbi;
      if (typeof abi === 'string')
        return {
          available: false,
          reason: `${launcher} --abi failed: ${abi}`,
          fix: 'rebuild it: pnpm --filter @ux/sandbox-landlock build',
        };
      if (abi < LANDLOCK_MIN_ABI)
        return {
          available: false,
          reason: 'the kernel has no Landlock (or it is disabled)',
          fix: 'use a kernel of 5.13 or later with Landlock enabled (CONFIG_SECURITY_LANDLOCK=y, landlock in lsm=…), or the bwrap backend',
        };
      const programs = new Map<SeccompNetwork, Uint8Array>();
      const program = (network: SeccompNetwork): Uint8Array => {
        let built = programs.get(network);
        if (!built) {
          built = buildSeccompProgram(arch, network);
          programs.set(network, built);
        }
        return built;
      };
      // The launch must really work here (seccomp, no_new_privs, the ruleset): one run of `true`.
      const failure = await probeRun(launcher, abi, program('restricted'), settings.maxAbi);
      if (failure)
        return {
          available: false,
          reason: failure,
          fix: 'run where seccomp filters and Landlock can be loaded (CONFIG_SECCOMP_FILTER)',
        };
      if (settings.quarantineDir) {
        try {
          mkdirSync(settings.quarantineDir, { recursive: true, mode: 0o700 });
        } catch {
          // Unwritable: taken-away paths are removed rather than moved.
        }
      }
      const gitTemplateDir = findGitTemplateDir();
      const guard = createPathGuard({
        binaryPath: guardBinary,
        ...(settings.quarantineDir ? { quarantineDir: settings.quarantineDir } : {}),
        ...(gitTemplateDir ? { gitTemplateDir } : {}),
      });
      return { abi, launcher, guardBinary, remover, guard, program };
    })();
    return ready;
  };

  return {
    specificationVersion: SANDBOX_SPECIFICATION_VERSION,
    id: LANDLOCK_BACKEND_ID,
    platforms: ['linux'],

    async probe(): Promise<SandboxProbe> {
      const state = await prepare();
      if ('available' in state) return state;
      return {
        available: true,
        version: `Landlock ABI ${state.abi}`,
        details: { launcher: state.launcher, abi: state.abi, seccomp: true, namespaces: false },
        enforces: landlockEnforces(state.abi),
      };
    },

    async plan(request): Promise<LaunchPlan> {
      if (request.argv.length === 0) throw new MissingCommandLineError();
      if (!isAbsolutePath(request.cwd))
        throw new InvalidArgumentsError({
          tool: 'landlock plan',
          issues: [{ path: 'cwd', message: `must be absolute, got "${request.cwd}"` }],
        });
      const state = await prepare();
      if ('available' in state)
        throw new SandboxUnavailableError({
          backend: LANDLOCK_BACKEND_ID,
          reason: state.reason,
          fix: state.fix,
        });
      const plannedAt = Date.now();
      const policy = repositories.policyFor(request.policy);
      const plan = planLandlock(
        { ...request, policy },
        {
          launcher: state.launcher,
          abi: state.abi,
          ...(settings.maxAbi !== undefined ? { maxAbi: state.abi } : {}),
          seccompProgram: state.program,
          fs: planFsView(),
          homeDir: settings.homeDir ?? homedir(),
          privateDirs: [...uxRuntimeRoots(), ...(settings.quarantineDir ? [settings.quarantineDir] : [])],
          privateTmp: () => tmp.path(),
          hostPrograms: [state.launcher, state.guardBinary, state.remover],
        },
      );
      return guardedLaunchPlan(
        { ...plan, cwd: request.cwd, sandboxType: LANDLOCK_BACKEND_ID, policy, plannedAt },
        state.guard,
        repositories,
      );
    },

    classifyDenial: classifyLandlockDenial,

    async close() {
      const state = await ready;
      ready = undefined;
      if (state && !('available' in state)) await state.guard.close();
      tmp.remove();
    },
  };
}

/** `ux-landlock-exec --abi`: the kernel's Landlock ABI, or what went wrong. */
function launcherAbi(launcher: string): Promise<number | string> {
  return new Promise((resolve) => {
    execFile(launcher, ['--abi'], { timeout: 10_000 }, (error, stdout, stderr) => {
      if (error) return resolve(String(stderr).trim() || error.message);
      const abi = Number(String(stdout).trim());
      resolve(Number.isInteger(abi) && abi >= 0 ? abi : `unexpected output ${JSON.stringify(stdout)}`);
    });
  });
}

/** One real launch of `true` under a read-only ruleset; undefined when it worked, else the reason. */
function probeRun(
  launcher: string,
  abi: number,
  program: Uint8Array,
  maxAbi: number | undefined,
): Promise<string | undefined> {
  const hex = Buffer.from(program.buffer, program.byteOffset, program.byteLength).toString('hex');
  const argv = ['--min-abi', String(abi), '--ro', '/usr', '--ro', '/bin', '--ro', '/lib', '--ro', '/lib64'];
  if (maxAbi !== undefined) argv.push('--max-abi', String(abi));
  argv.push('--seccomp-program', hex, '--', 'true');
  return new Promise((resolve) => {
    execFile(
      launcher,
      argv,
      { timeout: 10_000, env: { PATH: '/usr/bin:/bin' } },
      (error, _stdout, stderr) => {
        resolve(error ? String(stderr).trim() || error.message : undefined);
      },
    );
  });
}

const PACKAGE_NAME = '@ux/sandbox-landlock';

/** This package's launcher, or a SandboxUnavailableError saying how to build it. */
export function checkedLauncher(): string {
  const path = join(landlockPackageDir(), 'native', 'build', 'ux-landlock-exec');
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    throw new SandboxUnavailableError({
      backend: LANDLOCK_BACKEND_ID,
      reason: `ux-landlock-exec is not built (no executable at ${path})`,
      fix: 'run `pnpm --filter @ux/sandbox-landlock build` (needs a C compiler: apt-get install build-essential)',
    });
  }
}

/** This package's directory: above this module, or the nearest `node_modules/@ux/sandbox-landlock` (bundles). */
function landlockPackageDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  if (isThisPackage(dirname(here))) return dirname(here);
  for (let dir = here; dirname(dir) !== dir; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', '@ux', 'sandbox-landlock');
    if (isThisPackage(candidate)) return candidate;
  }
  return dirname(here);
}

function isThisPackage(dir: string): boolean {
  try {
    return (
      (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name ===
      PACKAGE_NAME
    );
  } catch {
    return false;
  }
}
