import { spawn } from 'node:child_process';
import { constants, fstatSync, openSync, statSync } from 'node:fs';
import {
  type ExecProcess,
  InvalidArgumentsError,
  MissingCommandLineError,
  SPAWNER_SPECIFICATION_VERSION,
  type Spawner,
  SpawnFailedError,
} from '@ux/protocol/core';
import { checkedHelperPath, defaultHelperPath, helperArgs } from './helper-path.js';
import { HostReaper } from './host-reaper.js';
import { inheritableFds } from './inheritable-fds.js';
import { type InputIdentity, probeInputWait, READ_SYSCALLS } from './input-wait.js';
import { loadNodePtyNative, type NativeTerminal, type NodePtyNative } from './node-pty-native.js';
import { PipeProcess } from './pipe-process.js';
import { procReader } from './proc-reader.js';
import { ProcessGroup } from './process-group.js';
import { PtyProcess } from './pty-process.js';
import { checkWorkingDirectory, resolveProgram } from './resolve-program.js';
import { DEFAULT_PTY_SIZE } from './spawn-constants.js';
import type { LocalSpawnRequest, SpawnEscalation } from './spawn-escalation.js';
import { decideSpawnKind } from './spawn-kind.js';
import { spawnRequestIssues } from './spawn-request-issues.js';
import { createWindowsSpawner, type WindowsSpawnerSettings } from './windows-spawner.js';

export interface LocalSpawnerSettings {
  /** Path of the compiled `ux-spawn-helper`; defaults to the one built with this package. */
  helperPath?: string;
  /**
   * When pipe children go through the helper that closes inherited descriptors: `auto` (default) when
   * this host holds descriptors without close-on-exec (checked at the first spawn), `always` for every
   * child. PTY children always go through it.
   */
  fdHygiene?: 'auto' | 'always';
  /**
   * The platform to spawn for (default `process.platform`). On `win32` the Windows spawner
   * (`createWindowsSpawner`, ConPTY and pipes in job objects) is returned instead; the POSIX settings
   * above do not apply there. Given explicitly, it lets tests check the routing anywhere.
   */
  platform?: NodeJS.Platform;
  /** Settings of the Windows spawner, used when the platform is `win32` (job objects: see there). */
  windows?: WindowsSpawnerSettings;
}

export interface LocalSpawner extends Spawner {
  /** Starts a command; a `LocalSpawnRequest` may also ask for an escalation socket (ZshFork). */
  spawn(request: LocalSpawnRequest): Promise<ExecProcess>;
  /** The pid of the host reaper, once a child has been started (diagnostics). */
  readonly reaperPid: number | undefined;
  /** Whether pipe children go through the helper; known after the first spawn (diagnostics). */
  readonly pipesThroughHelper: boolean | undefined;
  /**
   * Ends what the spawner keeps for the life of its host (the host reaper), once every command it
   * started has ended; a later spawn starts it again. Optional: a spawner without one keeps nothing.
   */
  close?(): Promise<void>;
}

/**
 * Starts commands on this machine: pipes through child_process, PTYs through node-pty. Every child
 * leads its own process group and session, gets exactly the environment it is given, inherits no
 * descriptor beyond stdio, and is killed with its whole group if the host dies. On Windows it is the
 * Windows spawner (`createWindowsSpawner`), chosen by `settings.platform`.
 */
export function createLocalSpawner(settings: LocalSpawnerSettings = {}): LocalSpawner {
  if ((settings.platform ?? process.platform) === 'win32') return createWindowsSpawner(settings.windows);
  // Found on first use: resolving the package costs a couple of milliseconds at start-up.
  let helperPath = settings.helperPath;
  const helper = () => {
    helperPath ??= defaultHelperPath();
    return helperPath;
  };
  let needsHygiene: boolean | undefined = settings.fdHygiene === 'always' ? true : undefined;
  let native: NodePtyNative | undefined;
  const hygiene = () => {
    // Descriptors without close-on-exec come from whoever started the host; check once.
    needsHygiene ??= inheritableFds()?.length !== 0;
    return needsHygiene;
  };
  const reaper = new HostReaper((shArgs) =>
    hygiene()
      ? {
          file: checkedHelperPath(helper(), ['/bin/sh']),
          args: helperArgs({ hostPid: 0, program: '/bin/sh', argv0: 'sh', args: shArgs }),
        }
      : { file: '/bin/sh', args: shArgs },
  );

  async function spawnLocal(request: LocalSpawnRequest): Promise<ExecProcess> {
    const { argv, cwd, escalation } = request;
    if (argv.length === 0) throw new MissingCommandLineError();
    validate(request);
    checkWorkingDirectory(argv, cwd);
    const program = resolveProgram(argv, request.env, cwd);
    const argv0 = request.arg0 ?? argv[0]!;
    const env = { ...request.env };
    const kind = decideSpawnKind(request);

    if (kind === 'pty') {
      native ??= loadNative(argv);
      const size = request.size ?? DEFAULT_PTY_SIZE;
      let process_: PtyProcess | undefined;
      let early: [number, number] | undefined;
      let terminal: NativeTerminal;
      try {
        terminal = native.fork(
          checkedHelperPath(helper(), argv),
          helperArgs({ hostPid: process.pid, program, argv0, args: argv.slice(1), escalation }),
          Object.entries(env).map(([name, value]) => `${name}=${value}`),
          cwd,
          size.cols,
          size.rows,
          -1,
          -1,
          true,
          native.helperPath,
          (code, signal) => {
            if (process_) process_.onExit(code, signal);
            else early = [code, signal];
          },
        );
      } catch (error) {
        throw new SpawnFailedError(
          { command: argv, path: program, reason: spawnReason(error) },
          { cause: error },
        );
      }
      // node-pty's own spawn helper calls setsid after the fork returns: until it has, the child's
      // group does not exist, and a signal sent to it (or the reaper's registration) would miss.
      await groupExists(terminal.pid, () => early !== undefined);
      const slave = holdSlave(terminal.pty);
      process_ = new PtyProcess(
        native,
        terminal,
        slave,
        new ProcessGroup(terminal.pid, reaper),
        inputProbe(terminal.pid, () => terminalIdentity(slave)),
      );
      if (early) process_.onExit(...early);
      return process_;
    }

    // An escalation socket is set up by the helper, so such a child always goes through it.
    const viaHelper = escalation !== undefined || hygiene();
    const file = viaHelper ? checkedHelperPath(helper(), argv) : program;
    const args = viaHelper
      ? helperArgs({ hostPid: process.pid, program, argv0, args: argv.slice(1), escalation })
      : argv.slice(1);
    const child = spawn(file, args, {
      cwd,
      env,
      argv0: viaHelper ? undefined : argv0,
      detached: true,
      stdio: [kind === 'pipe-with-stdin' ? 'pipe' : 'ignore', 'pipe', 'pipe'],
    });
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
    } catch (error) {
      throw new SpawnFailedError(
        { command: argv, path: program, reason: spawnReason(error) },
        { cause: error },
      );
    }
    return new PipeProcess(
      child,
      new ProcessGroup(child.pid!, reaper),
      inputProbe(child.pid!, () => (kind === 'pipe-with-stdin' ? stdinIdentity(child.pid!) : undefined)),
    );
  }

  return {
    specificationVersion: SPAWNER_SPECIFICATION_VERSION,
    id: 'local',
    spawn: spawnLocal,
    get reaperPid() {
      return reaper.pid;
    },
    get pipesThroughHelper() {
      return needsHygiene;
    },
    close: () => reaper.close(),
  };
}

/** Why a start failed, in words: E2BIG says what is too big rather than only its name. */
function spawnReason(error: unknown): string {
  if ((error as NodeJS.ErrnoException).code === 'E2BIG')
    return 'the command and its environment are larger than this system accepts for one program (E2BIG)';
  return (error as Error).message;
}

function loadNative(argv: readonly string[]): NodePtyNative {
  try {
    return loadNodePtyNative();
  } catch (error) {
    throw new SpawnFailedError(
      {
        command: argv,
        reason: `node-pty could not be loaded (${(error as Error).message}); reinstall it with a C++ toolchain available`,
      },
      { cause: error },
    );
  }
}

/** Refuses what the OS would reject or mangle: NUL bytes, `=` in names, nonsense PTY sizes. */
function validate(request: LocalSpawnRequest): void {
  const issues = spawnRequestIssues(request);
  if (request.escalation) issues.push(...escalationIssues(request.escalation));
  if (issues.length > 0) throw new InvalidArgumentsError({ tool: 'spawn', issues });
}

function escalationIssues(escalation: SpawnEscalation): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  const { socketPath, token, fd } = escalation;
  if (typeof socketPath !== 'string' || !socketPath.startsWith('/') || socketPath.includes('\0'))
    issues.push({ path: 'escalation.socketPath', message: 'must be an absolute path' });
  else if (Buffer.byteLength(socketPath) > 107)
    issues.push({ path: 'escalation.socketPath', message: 'must be at most 107 bytes (a Unix socket path)' });
  if (typeof token !== 'string' || !/^[0-9a-fA-F]{16,128}$/.test(token))
    issues.push({ path: 'escalation.token', message: 'must be 16 to 128 hex digits' });
  if (!Number.isInteger(fd) || fd < 10 || fd > 1023)
    issues.push({ path: 'escalation.fd', message: 'must be a whole number from 10 to 1023' });
  return issues;
}

/** The host's own hold on the terminal's slave side, so the child's last output cannot be lost. */
function holdSlave(path: string): number | undefined {
  try {
    return openSync(path, constants.O_RDWR | constants.O_NOCTTY);
  } catch {
    // The terminal is already gone (the child exited and the slave was torn down): nothing to hold.
    return undefined;
  }
}

/**
 * Linux: the "waiting for input" probe of a child (input-wait.ts), its input identified now, while the
 * child surely holds it. Elsewhere none: macOS and Windows do not tell (the method is absent).
 */
function inputProbe(
  pid: number,
  identify: () => InputIdentity | undefined,
): (() => boolean | undefined) | undefined {
  if (process.platform !== 'linux' || !READ_SYSCALLS[process.arch]) return undefined;
  const input = identify();
  const reader = procReader();
  return () => probeInputWait({ leaderPid: pid, input, reader });
}

/** The terminal's slave side, from the host's own descriptor of it. */
function terminalIdentity(slaveFd: number | undefined): InputIdentity | undefined {
  if (slaveFd === undefined) return undefined;
  try {
    const stats = fstatSync(slaveFd);
    return { dev: stats.dev, ino: stats.ino, rdev: stats.rdev };
  } catch {
    return undefined;
  }
}

/** The child's end of its stdin pipe (libuv gives a socket pair), read through /proc. */
function stdinIdentity(pid: number): InputIdentity | undefined {
  try {
    const stats = statSync(`/proc/${pid}/fd/0`);
    return { dev: stats.dev, ino: stats.ino };
  } catch {
    return undefined;
  }
}

/** Resolves once process group `pgid` exists (its leader called setsid), the child ended, or 2 s passed. */
async function groupExists(pgid: number, ended: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000;
  for (let delay = 0; !ended() && Date.now() < deadline; delay = Math.min(delay + 1, 10)) {
    try {
      process.kill(-pgid, 0);
      return;
    } catch (error) {
      // EPERM means the group exists but belongs to someone else: it exists.
      if ((error as NodeJS.ErrnoException).code === 'EPERM') return;
    }
    await new Promise((resolve) => setTimeout(resolve, delay));
  }
}
