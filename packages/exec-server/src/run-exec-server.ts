import type { Readable, Writable } from 'node:stream';
import { type EffectivePolicy, type HostState, type Spawner, UxError } from '@ux/protocol';
import { checkSandboxBackendIds, type SandboxRegistry } from '@ux/protocol-utils';
import { checkedDigest, tokenDigestFromFile } from './capability-token.js';
import { createExecServer, type ExecServer } from './exec-server.js';
import { listenWebSocket, type WebSocketListener } from './listen-websocket.js';
import { serveStdio } from './serve-stdio.js';

/** Where the server listens: one connection on stdin/stdout, or WebSocket on `host:port` (0: any free port). */
export type ExecServerListen = { kind: 'stdio' } | { kind: 'websocket'; host: string; port: number };

/** What `runExecServer` serves, and how; `ux exec-server` builds it from its command line. */
export interface ExecServerSettings {
  listen: ExecServerListen;
  /** WebSocket: the capability token's file (absolute path; surrounding whitespace ignored), or… */
  tokenFile?: string;
  /** …the token's SHA-256 in hex. Exactly one of the two is required for WebSocket. */
  tokenSha256?: string;
  /** What happens to a client's processes when it disconnects (default `keep`). */
  onDisconnect?: 'keep' | 'terminate';
  /** With `keep`: end a detached session's processes when no client resumed it within this many ms. */
  detachedTimeoutMs?: number;
  /** WebSocket only: also shut down when stdin closes (stdio always does). Default false. */
  exitOnStdinClose?: boolean;
  /** Sandbox backend ids to offer, in order of preference (default: every one `sandboxRegistry()` registers, in order). */
  sandboxBackends?: readonly string[];
  /** Backend ids the requirements allow (`allowed_sandbox_backends`); default any. */
  allowedSandboxBackends?: readonly string[];
}

/** Where the command writes (the same shape as the CLI's `Io`). */
export interface ExecServerIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  platform: NodeJS.Platform;
}

export interface RunExecServerDependencies {
  /** The sandbox backends to offer, limited to `enabled` ids when given. */
  sandboxRegistry: (enabled?: readonly string[]) => SandboxRegistry;
  /** The protocol streams of a stdio listener; default this process's stdin and stdout. */
  stdin?: Readable;
  stdout?: Writable;
  /** Stop on SIGINT / SIGTERM (default true); tests that run in-process turn it off. */
  handleSignals?: boolean;
  /** Resolves to stop the server (in addition to signals and stdin). */
  stop?: Promise<unknown>;
  /** Told the server once it exists (the CLI serves its hosted processes on the control socket). */
  onServer?: (server: ExecServer) => void;
  /** Hosts the processes; default a new `createLocalSpawner()`. */
  spawner?: Spawner;
  /** Helper directories advertised as `prependPathDirs` (the CLI's `apply_patch`); default none. */
  prependPathDirs?: readonly string[];
  /** What those helpers run, shown read-only inside every sandbox (`helperPaths` of the server). */
  helperPaths?: readonly string[];
  /** This host's ux files every sandbox keeps out of reach; default the runtime roots hidden. */
  hostState?: HostState;
  /**
   * What else this host adds to every policy it applies, after `hostState` (the CLI: a private /tmp
   * and the repositories found in the request's writable roots). Default: nothing.
   */
  protectPolicy?: (
    policy: EffectivePolicy,
    place: { cwd: string; projectRoots?: readonly string[] },
  ) => EffectivePolicy;
}

/**
 * Runs an exec-server to completion (what `ux exec-server` does): builds the server, serves stdio or
 * WebSocket, and on stdin close (stdio, or with `exitOnStdinClose`), SIGINT, SIGTERM or `stop` kills
 * every hosted process and returns 0. A token problem or a port that cannot be bound returns 1 with the
 * reason on stderr. A `sandboxBackends` id the registry does not hold throws `UnknownPluginError`.
 */
export async function runExecServer(
  args: ExecServerSettings,
  io: ExecServerIo,
  deps: RunExecServerDependencies,
): Promise<number> {
  const all = deps.sandboxRegistry();
  checkSandboxBackendIds(args.sandboxBackends ?? [], all.ids);
  if (
    args.listen.kind === 'websocket' &&
    (args.tokenFile === undefined) === (args.tokenSha256 === undefined)
  ) {
    throw new UxError(
      'invalid_arguments',
      'a WebSocket exec-server needs a capability token: set exactly one of tokenFile or tokenSha256',
    );
  }
  // Every backend stays registered; `sandboxBackends` is the order of preference, and only those in it are candidates.
  const registry = all;
  let tokenSha256: string | undefined;
  try {
    if (args.tokenFile !== undefined) tokenSha256 = tokenDigestFromFile(args.tokenFile);
    else if (args.tokenSha256 !== undefined) tokenSha256 = checkedDigest(args.tokenSha256);
  } catch (error) {
    io.stderr(`ux exec-server: ${(error as Error).message}\n`);
    return 1;
  }

  const server = createExecServer({
    ...(deps.spawner ? { spawner: deps.spawner } : {}),
    ...(deps.prependPathDirs ? { prependPathDirs: deps.prependPathDirs } : {}),
    ...(deps.helperPaths ? { helperPaths: deps.helperPaths } : {}),
    ...(deps.hostState ? { hostState: deps.hostState } : {}),
    ...(deps.protectPolicy ? { protectPolicy: deps.protectPolicy } : {}),
    sandboxRegistry: registry,
    ...(args.sandboxBackends ? { sandboxPreference: args.sandboxBackends } : {}),
    ...(args.allowedSandboxBackends ? { allowedSandboxBackends: args.allowedSandboxBackends } : {}),
    platform: io.platform,
    environment: io.env,
    onDisconnect: args.onDisconnect ?? 'keep',
    ...(args.detachedTimeoutMs === undefined ? {} : { detachedTimeoutMs: args.detachedTimeoutMs }),
    log: (line) => io.stderr(`${line}\n`),
  });
  deps.onServer?.(server);
  const stdin = deps.stdin ?? process.stdin;
  const stops: Promise<unknown>[] = [];
  if (deps.stop) stops.push(deps.stop);
  const removeSignals = deps.handleSignals === false ? () => {} : onStopSignal(stops);
  let listener: WebSocketListener | undefined;
  try {
    if (args.listen.kind === 'stdio') {
      stops.push(serveStdio(server, { input: stdin, output: deps.stdout ?? process.stdout }));
    } else {
      try {
        listener = await listenWebSocket(server, {
          host: args.listen.host,
          port: args.listen.port,
          tokenSha256: tokenSha256!,
        });
      } catch (error) {
        io.stderr(
          `ux exec-server: cannot listen on ${args.listen.host}:${args.listen.port}: ${(error as Error).message}\n`,
        );
        return 1;
      }
      io.stdout(`${listener.url}\n`);
      if (args.exitOnStdinClose) stops.push(inputClosed(stdin));
    }
    await Promise.race(stops);
  } finally {
    removeSignals();
    await listener?.close();
    await server.shutdown();
    // Helpers the sandbox backends keep between plans (bwrap's path guard) end with the server.
    await Promise.all(registry.ids.map((id) => registry.get(id).close?.()));
    if (args.listen.kind === 'stdio' || args.exitOnStdinClose) stdin.destroy();
  }
  return 0;
}

function onStopSignal(stops: Promise<unknown>[]): () => void {
  let handler: () => void = () => {};
  stops.push(
    new Promise<void>((resolve) => {
      handler = () => resolve();
    }),
  );
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

function inputClosed(input: Readable): Promise<void> {
  return new Promise((resolve) => {
    input.on('data', () => {});
    input.once('end', resolve);
    input.once('close', resolve);
    input.once('error', () => resolve());
  });
}
