import { randomUUID } from 'node:crypto';
import type { EnvironmentInfo } from '@ux/protocol';
import {
  type EnvPolicy,
  InvalidArgumentsError,
  MissingCommandLineError,
  type SandboxContext,
  SandboxUnavailableError,
  SPAWNER_SPECIFICATION_VERSION,
  type Spawner,
  SpawnFailedError,
  type SpawnRequest,
  WireErrorCode,
} from '@ux/protocol/core';
import { fileUriFromPath, pathFromFileUri, prependPathLine } from '@ux/protocol-utils';
import { ExecServerClient, ExecServerRequestError } from './exec-server-client.js';
import { ExecServerConnectionError } from './exec-server-connection-error.js';
import { takeSandboxRequest } from './exec-server-sandbox.js';
import type { ExecServerTransport } from './exec-server-transport.js';
import { loadProtocolSchemas } from './load-protocol-schemas.js';
import { RemoteProcess } from './remote-process.js';

/** A spawn request for an exec-server: it may also ask the server to apply a sandbox. */
export interface ExecServerSpawnRequest extends SpawnRequest {
  /** The wire `sandbox` of `process/start`; the start fails unless the server applies one. */
  sandbox?: SandboxContext;
  /** For this command instead of the spawner's `envPolicy`. */
  envPolicy?: EnvPolicy;
  /**
   * Ask the server to run a `[shell, -lc, script]` argv with its own snapshot of that shell (made
   * there, in the remote environment, once per `scopeId`): Codex's `shellSnapshot` start parameter.
   */
  shellSnapshot?: { scopeId: string; shell: { name: string; path: string } };
}

export interface ExecServerSpawnerSettings {
  /** Opens a connection: `() => spawnStdioExecServer({…})` or `() => connectWebSocketExecServer({…})`. */
  connect: () => Promise<ExecServerTransport>;
  /** The environment's name in error messages (`remote environment "box"`). Default `exec-server`. */
  name?: string;
  /** `initialize.clientName`; default `ux`. */
  clientName?: string;
  /**
   * Sent with every start: the server builds the child environment from its own with this policy and
   * puts the request's `env` on top. Without it the child gets exactly the request's `env`.
   */
  envPolicy?: EnvPolicy;
  /** Handshake timeout; default 10000 ms. */
  initializeTimeoutMs?: number;
  /** Messages from the server that break the protocol (dropped); default: ignored. */
  onProtocolError?: (message: string) => void;
  /**
   * After a lost connection, try for this long (ms) to resume the session (`initialize.resumeSessionId`)
   * before live processes are reported lost: for servers that keep a client's processes across a
   * disconnect (ux exec-server's default `--on-disconnect keep`) and a transport that can be reopened
   * (WebSocket). 0 (default): no resume; a lost connection ends its processes at once.
   */
  resumeWindowMs?: number;
}

export interface ExecServerSpawner extends Spawner {
  spawn(request: ExecServerSpawnRequest): Promise<RemoteProcess>;
  /**
   * The handshaken connection, opened on first use. After the server is lost, the next call opens a
   * new one. Rejects with `SpawnFailedError`-ready text when the server cannot be reached.
   */
  connection(): Promise<ExecServerClient>;
  /** What the server said about itself, once connected. */
  readonly environmentInfo: EnvironmentInfo | undefined;
  /** Closes the connection (a stdio server stops, and with it every process it hosts). */
  close(): Promise<void>;
}

/**
 * The exec-server spawn style: runs commands on an exec-server (ux's, or Codex's) through the
 * protocol. A server that cannot be reached, fails its handshake or dies is an error the caller sees;
 * nothing ever falls back to running locally.
 */
export function createExecServerSpawner(settings: ExecServerSpawnerSettings): ExecServerSpawner {
  const name = settings.name ?? 'exec-server';
  const resumeWindowMs = settings.resumeWindowMs ?? 0;
  if (!(Number.isFinite(resumeWindowMs) && resumeWindowMs >= 0))
    throw new RangeError(`resumeWindowMs must be a number of milliseconds >= 0, not ${resumeWindowMs}`);
  let current: Promise<ExecServerClient> | undefined;
  let info: EnvironmentInfo | undefined;
  let counter = 0;
  // One resume per lost connection, shared by every process that lived on it.
  const resuming = new WeakMap<ExecServerClient, Promise<ExecServerClient>>();
  // Connections opened by a resume, closed with the spawner even when `current` moved on.
  const resumed = new Set<ExecServerClient>();
  let closing = new AbortController();

  async function open(resumeSessionId?: string): Promise<ExecServerClient> {
    let transport: ExecServerTransport;
    try {
      transport = await settings.connect();
    } catch (error) {
      throw new ExecServerConnectionError('connect', `cannot reach ${name}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    try {
      const client = await ExecServerClient.connect(transport, {
        ...(settings.clientName ? { clientName: settings.clientName } : {}),
        ...(settings.initializeTimeoutMs ? { initializeTimeoutMs: settings.initializeTimeoutMs } : {}),
        ...(settings.onProtocolError ? { onProtocolError: settings.onProtocolError } : {}),
        ...(resumeSessionId ? { resumeSessionId } : {}),
      });
      info = client.environmentInfo;
      return client;
    } catch (error) {
      throw new ExecServerConnectionError(
        'handshake',
        `the handshake with ${name} failed: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }

  /**
   * Reopens the transport and resumes `lost`'s session, retrying (0.25 s, doubling to 4 s) until the
   * window ends. A server that no longer has the session (it restarted, or ended the processes when
   * the connection closed) is final at once; one still holding it for the dead connection is retried.
   */
  function resumeAfterLoss(lost: ExecServerClient): Promise<ExecServerClient> {
    const existing = resuming.get(lost);
    if (existing) return existing;
    const { signal } = closing;
    const attempt = (async () => {
      const deadline = Date.now() + resumeWindowMs;
      let delay = 250;
      let lastError = 'no attempt was made';
      while (!signal.aborted) {
        try {
          const client = await open(lost.sessionId);
          if (signal.aborted) {
            await client.close();
            break;
          }
          resumed.add(client);
          // New commands use the resumed connection too.
          if (current && (await current.catch(() => undefined)) === lost) current = Promise.resolve(client);
          return client;
        } catch (error) {
          const answer = (error as Error).cause;
          if (
            ExecServerRequestError.isInstance(answer) &&
            !answer.transportClosed &&
            answer.wireCode !== WireErrorCode.SessionAlreadyAttached
          )
            throw new ExecServerConnectionError(
              'resume',
              `${name} no longer has this session (${answer.message})`,
              {
                cause: answer,
              },
            );
          lastError = (error as Error).message;
        }
        if (Date.now() + delay > deadline) break;
        await sleep(delay, signal);
        delay = Math.min(delay * 2, 4_000);
      }
      if (signal.aborted)
        throw new ExecServerConnectionError('resume', 'ux closed the environment while reconnecting');
      throw new ExecServerConnectionError(
        'resume',
        `it could not be resumed within ${(resumeWindowMs / 1000).toFixed(1)} s: ${lastError}`,
      );
    })();
    resuming.set(lost, attempt);
    return attempt;
  }

  function connection(): Promise<ExecServerClient> {
    const existing = current;
    if (existing) {
      return existing.then(
        (client) => {
          if (!client.closed) return client;
          // A connection being resumed for its live processes serves new commands too, once back.
          const resumed = resuming.get(client);
          return resumed ? resumed.catch(() => reconnect(existing)) : reconnect(existing);
        },
        () => reconnect(existing),
      );
    }
    current = open();
    return current;
  }

  function reconnect(stale: Promise<ExecServerClient>): Promise<ExecServerClient> {
    if (current === stale) current = open();
    return current!;
  }

  async function spawn(request: ExecServerSpawnRequest): Promise<RemoteProcess> {
    if (request.argv.length === 0) throw new MissingCommandLineError();
    const { argv, sandbox } = takeSandboxRequest(request);
    if (argv.length === 0) throw new MissingCommandLineError();
    let client: ExecServerClient;
    try {
      client = await connection();
    } catch (error) {
      throw new SpawnFailedError(
        {
          command: argv,
          reason: `${(error as Error).message}; the command was not run (ux never runs it locally instead)`,
        },
        { cause: error },
      );
    }
    // Loaded by the connection already: this only hands them over.
    const { sandboxContextSchema, startResultSchema } = await loadProtocolSchemas();
    const checked = sandbox && sandboxContextSchema.safeParse(sandbox);
    if (checked && !checked.success) {
      throw new InvalidArgumentsError({
        tool: 'exec-server sandbox',
        issues: [{ path: 'sandbox', message: `is not a wire sandbox context: ${checked.error.message}` }],
      });
    }
    counter += 1;
    const processId = `${counter}-${randomUUID()}`;
    const process = new RemoteProcess(client, {
      processId,
      tty: request.tty,
      stdinOpen: request.tty || request.stdin === 'pipe',
      serverName: name,
      ...(resumeWindowMs > 0 ? { resume: resumeAfterLoss } : {}),
    });
    const envPolicy = request.envPolicy ?? settings.envPolicy;
    // A server that does not offer snapshots refuses the parameter: its login files run instead.
    const shellSnapshot =
      request.shellSnapshot && client.can(SHELL_SNAPSHOT_CAPABILITY) ? request.shellSnapshot : undefined;
    let sandboxType: string;
    try {
      const result = await client.request(
        'process/start',
        {
          processId,
          argv: withPrependedPath(argv, client.environmentInfo.prependPathDirs),
          cwd: fileUriFromPath(request.cwd),
          env: request.env,
          tty: request.tty,
          pipeStdin: !request.tty && request.stdin === 'pipe',
          arg0: request.arg0 ?? null,
          ...(envPolicy ? { envPolicy } : {}),
          sandbox: checked ? checked.data : null,
          ...(shellSnapshot ? { shellSnapshot } : {}),
        },
        startResultSchema,
      );
      sandboxType = result.sandboxType ?? 'none';
    } catch (error) {
      process.abandon();
      throw startError(name, argv, error);
    }
    process.sandboxType = sandboxType;
    if (sandbox && sandboxType === 'none') {
      // A server that ignores `sandbox` must not run the command unconfined under our name.
      await process.terminate();
      throw new SandboxUnavailableError({
        backend: 'exec-server',
        reason: `${name} started the command without the sandbox it was asked for (it reported sandboxType "none"); it was killed at once`,
        fix: 'run a server that applies sandboxes (ux exec-server on a host where bubblewrap works), or choose a policy without a sandbox',
      });
    }
    return process;
  }

  return {
    specificationVersion: SPAWNER_SPECIFICATION_VERSION,
    id: 'exec-server',
    spawn,
    connection,
    get environmentInfo() {
      return info;
    },
    async close() {
      closing.abort();
      closing = new AbortController();
      const pending = current;
      current = undefined;
      const others = [...resumed];
      resumed.clear();
      const client = await pending?.catch(() => undefined);
      await Promise.all([...new Set([client, ...others])].map((each) => each?.close()));
    },
  };
}

/** Maps a failed `process/start` to the error the caller gets, naming the command. */
function startError(name: string, argv: readonly string[], error: unknown): Error {
  if (ExecServerRequestError.isInstance(error)) {
    // ux's server already names the program; say it once.
    const prefix = `failed to start ${argv[0]}: `;
    const message = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
    if (error.wireCode === WireErrorCode.InvalidParams) {
      return new InvalidArgumentsError({
        tool: 'process/start',
        issues: [{ path: '', message: `${name}: ${message}` }],
      });
    }
    const reason = error.transportClosed
      ? `${message}; the command may not have run (ux never runs it locally instead)`
      : `${name} could not start it: ${message}`;
    return new SpawnFailedError({ command: argv, reason }, { cause: error });
  }
  return new SpawnFailedError(
    { command: argv, reason: `${name}: ${(error as Error).message}` },
    { cause: error },
  );
}

/** Codex's capability for `process/start`'s `shellSnapshot`. */
const SHELL_SNAPSHOT_CAPABILITY = 'shellSnapshotV2';

/**
 * The server's `prependPathDirs` (where its helpers live, ux's `apply_patch` say) put first on the
 * PATH of a POSIX shell's script, after the login files ran: `[sh, -lc|-c, script]` only, the way
 * Codex's client uses them. Any other argv is sent as it is.
 */
export function withPrependedPath(argv: readonly string[], dirs: readonly string[] | undefined): string[] {
  if (!dirs || dirs.length === 0 || argv.length !== 3) return [...argv];
  const [shell, flag, script] = argv as [string, string, string];
  if (flag !== '-c' && flag !== '-lc') return [...argv];
  if (!/(^|\/)(ba|z|da|k)?sh$/.test(shell)) return [...argv];
  const paths: string[] = [];
  for (const dir of dirs) {
    try {
      paths.push(dir.startsWith('file:') ? pathFromFileUri(dir, 'prependPathDirs') : dir);
    } catch {
      // A malformed entry from the server is left out, not sent to a shell.
    }
  }
  if (paths.length === 0) return [...argv];
  return [shell, flag, `${prependPathLine(paths)}${script}`];
}

/** Waits `ms`, or less when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}
