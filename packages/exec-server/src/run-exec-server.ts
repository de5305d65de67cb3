import type { Readable, Writable } from 'node:stream';
import type { SandboxRegistry, Spawner } from '@ux/protocol';
import { checkedDigest, tokenDigestFromFile } from './capability-token.js';
import { createExecServer } from './exec-server.js';
import { EXEC_SERVER_USAGE, type ExecServerArgs, ExecServerArgsError } from './exec-server-args.js';
import { listenWebSocket, type WebSocketListener } from './listen-websocket.js';
import { serveStdio } from './serve-stdio.js';

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
  /** The protocol streams of `--listen stdio`; default this process's stdin and stdout. */
  stdin?: Readable;
  stdout?: Writable;
  /** Stop on SIGINT / SIGTERM (default true); tests that run in-process turn it off. */
  handleSignals?: boolean;
  /** Resolves to stop the server (in addition to signals and stdin). */
  stop?: Promise<unknown>;
  /** Hosts the processes; default a new `createLocalSpawner()`. */
  spawner?: Spawner;
  /** Helper directories advertised as `prependPathDirs` (the CLI's `apply_patch`); default none. */
  prependPathDirs?: readonly string[];
}

/**
 * Runs `ux exec-server` to completion: builds the server, serves stdio or WebSocket, and on stdin close
 * (stdio, or with `--exit-on-stdin-close`), SIGINT, SIGTERM or `stop` kills every hosted process and
 * returns 0. A token problem or a port that cannot be bound returns 1 with the reason on stderr.
 * Argument mistakes throw `ExecServerArgsError`.
 */
export async function runExecServer(
  args: ExecServerArgs,
  io: ExecServerIo,
  deps: RunExecServerDependencies,
): Promise<number> {
  if (args.help) {
    io.stdout(EXEC_SERVER_USAGE);
    return 0;
  }
  const all = deps.sandboxRegistry();
  for (const id of args.sandboxBackends ?? []) {
    if (!all.has(id)) {
      throw new ExecServerArgsError(
        `unknown sandbox backend ${JSON.stringify(id)}; available: ${all.ids.join(', ') || '(none)'}`,
      );
    }
  }
  const registry = args.sandboxBackends ? deps.sandboxRegistry(args.sandboxBackends) : all;
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
    sandboxRegistry: registry,
    platform: io.platform,
    environment: io.env,
    onDisconnect: args.onDisconnect,
    log: (line) => io.stderr(`${line}\n`),
  });
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
