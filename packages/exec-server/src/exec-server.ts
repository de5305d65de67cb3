import { type EffectivePolicy, type HostState, type Spawner, WireErrorCode } from '@ux/protocol';
import { createSandboxRegistry, type SandboxRegistry, uxRuntimeRoots } from '@ux/protocol-utils';
import { createLocalSpawner } from '@ux/spawn';
import { ConnectionHandler, type ServerConnection } from './connection-handler.js';
import { environmentInfo } from './environment-info.js';
import { EXITED_PROCESS_RETENTION_MS, SHUTDOWN_GRACE_MS } from './exec-server-constants.js';
import { ExecServerSession } from './exec-server-session.js';
import { EXEC_SERVER_VERSION } from './exec-server-version.js';
import type { HostedProcess } from './hosted-process.js';
import { invalidRequest, RpcError } from './rpc-error.js';
import { createSandboxSelection } from './sandbox-selection.js';
import { ShellSnapshotStore } from './shell-snapshot-store.js';

export interface ExecServerOptions {
  /** Hosts the processes; default `createLocalSpawner()` from `@ux/spawn`. */
  spawner?: Spawner;
  /**
   * Backends a `sandbox` request may use: the first for this platform, in `sandboxPreference` order and
   * allowed by `allowedSandboxBackends`, whose probe passes and that enforces everything the request's
   * policy needs (`selectSandboxBackend` of `@ux/protocol`). Default none.
   */
  sandboxRegistry?: SandboxRegistry;
  /** Backend ids in order of preference (config `sandbox_backends`); default the registry's order. */
  sandboxPreference?: readonly string[];
  /** Backend ids the requirements allow (`allowed_sandbox_backends`); default any. */
  allowedSandboxBackends?: readonly string[];
  /** Default `process.platform`. */
  platform?: NodeJS.Platform;
  /** The server's environment, which `envPolicy` filters; default `process.env`. */
  environment?: Readonly<Record<string, string | undefined>>;
  /**
   * What happens to a session's processes when its connection ends: `keep` (default; they run on
   * until terminated, resumed with `initialize.resumeSessionId`, or the server shuts down) or
   * `terminate` (killed at once).
   */
  onDisconnect?: 'keep' | 'terminate';
  /**
   * With `keep`: how long (ms) a detached session's processes wait for a client to resume it before
   * they are ended, so a client that never comes back leaves nothing running. Default: no limit
   * (Codex's behaviour).
   */
  detachedTimeoutMs?: number;
  /** How long a closed process stays readable; default 30000 ms. */
  retentionMs?: number;
  /** Diagnostics (never on the protocol stream); default: nothing. */
  log?: (line: string) => void;
  /**
   * A directory this server may keep private files in (shell snapshots go to `shell-snapshots/` inside,
   * created 0700 and removed at shutdown). Default: a new runtime directory of this server,
   * `exec-server-PID-RANDOM` in the user's runtime root (`uxRuntimeRoot()` of `@ux/protocol`), which
   * every sandbox hides; removed at shutdown.
   */
  stateDir?: string;
  /**
   * This host's ux files that every sandbox the server applies keeps out of reach, added to each
   * request's policy (a client's policy knows nothing of this host). Default: the runtime roots hidden
   * (`{ hidden: uxRuntimeRoots() }`); the CLI adds its `UX_HOME` and requirements file read-only.
   */
  hostState?: HostState;
  /**
   * What else this host adds to every policy it applies, after `hostState` (the CLI: a private /tmp
   * and the repositories found in the request's writable roots). Default: nothing.
   */
  protectPolicy?: (
    policy: EffectivePolicy,
    place: { cwd: string; projectRoots?: readonly string[] },
  ) => EffectivePolicy;
  /** How long a shell snapshot's capture may take; default 5000 ms. */
  shellSnapshotTimeoutMs?: number;
  /**
   * Directories of helper programs (the CLI's `apply_patch`) advertised as `prependPathDirs`: clients
   * put them first on their commands' PATH. Absolute paths on this host; default none.
   */
  prependPathDirs?: readonly string[];
  /**
   * What those helpers run (the CLI: Node and its own directory): shown read-only inside every sandbox
   * this host applies, even where the sandbox hides their place (a private /tmp). Default none.
   */
  helperPaths?: readonly string[];
}

/** A process host speaking the exec-server protocol to any number of connections. */
export interface ExecServer {
  /** Serves one connection; feed it incoming messages through the returned handler. */
  accept(connection: ServerConnection): ConnectionHandler;
  /** Kills every process of every session, waits for them, and refuses new starts. Idempotent. */
  shutdown(): Promise<void>;
  /** Live sessions (attached or kept after a disconnect). */
  readonly sessionCount: number;
  /**
   * Every hosted process of every session, each with a number of its own for this server (1, 2, …:
   * what `ux ps` and `ux attach` call it; the protocol's process ids are the clients' and may repeat
   * across sessions).
   */
  hostedProcesses(): { id: number; sessionId: string; process: HostedProcess }[];
}

/**
 * Creates the server core, independent of transport (`serveStdio`, `listenWebSocket`). Nothing starts
 * until a connection is accepted.
 */
export function createExecServer(options: ExecServerOptions = {}): ExecServer {
  const spawner = options.spawner ?? createLocalSpawner();
  const platform = options.platform ?? process.platform;
  const serverEnv = options.environment ?? process.env;
  const registry = options.sandboxRegistry ?? createSandboxRegistry({});
  const selectSandbox = createSandboxSelection(registry, platform, {
    ...(options.sandboxPreference ? { preference: options.sandboxPreference } : {}),
    ...(options.allowedSandboxBackends ? { allowed: options.allowedSandboxBackends } : {}),
  });
  // Probe now, so the first `initialize` (which reports whether sandboxing works) does not wait for it.
  if (registry.forPlatform(platform).length > 0) void selectSandbox();
  const log = options.log ?? (() => {});
  const sessions = new Set<ExecServerSession>();
  const hostState = options.hostState ?? { hidden: uxRuntimeRoots() };
  // Snapshots are for POSIX shells (bash, zsh, sh); a Windows host offers none.
  const snapshots =
    platform === 'win32'
      ? undefined
      : new ShellSnapshotStore({
          spawner,
          selectSandbox,
          log,
          hostState,
          ...(options.stateDir ? { stateDir: options.stateDir } : {}),
          ...(options.shellSnapshotTimeoutMs ? { timeoutMs: options.shellSnapshotTimeoutMs } : {}),
        });
  const deps = {
    spawner,
    selectSandbox,
    serverEnv,
    hostState,
    helperPaths: options.helperPaths ?? [],
    ...(options.protectPolicy ? { protectPolicy: options.protectPolicy } : {}),
    ...(snapshots ? { snapshots } : {}),
  };
  let shuttingDown: Promise<void> | undefined;
  // The numbers `hostedProcesses` gives, by process.
  const numbers = new WeakMap<HostedProcess, number>();
  let lastNumber = 0;

  const host = {
    newSession() {
      // A detached session with nothing left running will not be resumed for anything: forget it.
      for (const old of sessions) if (!old.attached && old.idle()) sessions.delete(old);
      const session = new ExecServerSession(deps, options.retentionMs ?? EXITED_PROCESS_RETENTION_MS);
      sessions.add(session);
      return session;
    },
    resumeSession(sessionId: string) {
      const session = [...sessions].find((candidate) => candidate.id === sessionId);
      if (!session) return invalidRequest(`unknown session id ${sessionId}`);
      if (session.attached) {
        return new RpcError(
          WireErrorCode.SessionAlreadyAttached,
          `session ${sessionId} is attached to another connection`,
        );
      }
      return session;
    },
    sessionDetached(session: ExecServerSession) {
      if (options.onDisconnect === 'terminate' || session.idle()) {
        sessions.delete(session);
        void session.shutdown(SHUTDOWN_GRACE_MS);
        return;
      }
      const timeout = options.detachedTimeoutMs;
      if (timeout === undefined) return;
      const timer = setTimeout(() => {
        if (session.attached || !sessions.has(session)) return;
        sessions.delete(session);
        log(`session ${session.id}: no client resumed it within ${timeout} ms; ending its processes`);
        void session.shutdown(SHUTDOWN_GRACE_MS);
      }, timeout);
      timer.unref();
    },
    async environmentInfo() {
      const choice = await selectSandbox();
      return environmentInfo({
        version: EXEC_SERVER_VERSION,
        serverEnv,
        platform,
        sandboxing: choice.available,
        shellSnapshots: snapshots !== undefined,
        prependPathDirs: options.prependPathDirs ?? [],
      });
    },
    log,
  };

  return {
    accept(connection) {
      if (shuttingDown) {
        connection.close();
      }
      return new ConnectionHandler(connection, host);
    },
    shutdown() {
      shuttingDown ??= (async () => {
        await Promise.allSettled([
          ...[...sessions].map((session) => session.shutdown(SHUTDOWN_GRACE_MS)),
          // Captures in flight are ended; the snapshot files (the login environment) are removed.
          snapshots?.close(),
        ]);
        sessions.clear();
      })();
      return shuttingDown;
    },
    get sessionCount() {
      return sessions.size;
    },
    hostedProcesses() {
      const all: { id: number; sessionId: string; process: HostedProcess }[] = [];
      for (const session of sessions)
        for (const process of session.hosted()) {
          let id = numbers.get(process);
          if (id === undefined) {
            id = ++lastNumber;
            numbers.set(process, id);
          }
          all.push({ id, sessionId: session.id, process });
        }
      return all.sort((a, b) => a.id - b.id);
    },
  };
}
