import { chmodSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { LineSplitter } from '@ux/protocol-utils';
import { ControlError } from './control-error.js';
import { controlSocketPath, ensureControlDirectory } from './control-paths.js';
import {
  CONTROL_MAX_LINE_BYTES,
  CONTROL_PROTOCOL_VERSION,
  type ControlAnswer,
  encodeControlMessage,
  parseControlRequest,
} from './control-wire.js';
import { sweepStaleControlSockets } from './sweep-stale-control-sockets.js';

/** What a ux process is, as `ux ps` shows it. */
export type ControlProcessKind = 'mcp' | 'exec' | 'exec-server';

/** The answer to `hello`: who serves this socket. */
export interface ControlHello {
  protocol: typeof CONTROL_PROTOCOL_VERSION;
  pid: number;
  kind: ControlProcessKind;
  /** The MCP client's name and version (`ux mcp`), once it said them. */
  clientName?: string;
  cwd: string;
  /** Milliseconds since the epoch. */
  startedAt: number;
  /** ux's version. */
  version: string;
}

/** One client of the control socket, as a handler sees it. */
export interface ControlConnection {
  /** Sends an event to this client only. */
  send(event: string, params: unknown): void;
  /** Adds this client to a topic's audience (`publish`). */
  subscribe(topic: string): void;
  unsubscribe(topic: string): void;
  /** Runs when the client goes (or the server closes); at once when already gone. */
  onClose(listener: () => void): void;
  readonly closed: boolean;
}

export type ControlHandler = (params: unknown, connection: ControlConnection) => unknown;

export interface ControlServer {
  /** The socket's path. */
  readonly path: string;
  /** Serves `method` (a dotted lowercase name); the handler validates `params` and throws `ControlError`. */
  handle(method: string, handler: ControlHandler): void;
  /** Sends an event to every client subscribed to `topic`. */
  publish(topic: string, event: string, params: unknown): void;
  /** Updates what `hello` says (the MCP client's name once it is known). */
  setInfo(info: { clientName?: string }): void;
  /** Stops serving: clients are disconnected, the socket removed. */
  close(): Promise<void>;
}

export interface ControlServerOptions {
  kind: ControlProcessKind;
  cwd: string;
  version: string;
  clientName?: string;
  /** Default ux's runtime root (`uxRuntimeRoot()`). */
  runtimeRoot?: string;
  /** A handler threw something other than a `ControlError` (a bug): for the process's log. */
  onHandlerError?: (method: string, error: unknown) => void;
}

/**
 * Serves this process's control socket, `<runtime root>/control/<pid>.sock` (0600 in a 0700
 * directory of this user, out of every sandbox's reach), speaking the JSON-lines protocol of
 * docs/control-plane.md. Stale sockets of processes that are gone are removed first. Every line a
 * client sends is checked; a bad one gets an error answer and the connection stays usable.
 */
export async function startControlServer(options: ControlServerOptions): Promise<ControlServer> {
  const dir = ensureControlDirectory(options.runtimeRoot);
  sweepStaleControlSockets(dir);
  const path = controlSocketPath(process.pid, options.runtimeRoot);
  // A socket of this pid is a leftover of an earlier process that had the same pid.
  rmSync(path, { force: true });
  const info: ControlHello = {
    protocol: CONTROL_PROTOCOL_VERSION,
    pid: process.pid,
    kind: options.kind,
    ...(options.clientName ? { clientName: options.clientName } : {}),
    cwd: options.cwd,
    startedAt: Date.now(),
    version: options.version,
  };
  const handlers = new Map<string, ControlHandler>([['hello', () => ({ ...info })]]);
  const audiences = new Map<string, Set<Connection>>();
  const connections = new Set<Connection>();

  const server: Server = createServer((socket) => {
    const connection = new Connection(socket, audiences);
    connections.add(connection);
    connection.onClose(() => connections.delete(connection));
    const lines = new LineSplitter(
      CONTROL_MAX_LINE_BYTES,
      (line) => {
        if (line.trim() === '') return;
        void answer(connection, line);
      },
      () =>
        connection.answer({
          v: 1,
          id: 0,
          error: { code: 'bad_request', message: `a line longer than ${CONTROL_MAX_LINE_BYTES} bytes` },
        }),
    );
    socket.on('data', (data) => lines.push(data));
  });
  const answer = async (connection: Connection, line: string) => {
    let id = 0;
    try {
      const request = parseControlRequest(line);
      id = request.id;
      const handler = handlers.get(request.method);
      if (!handler)
        throw new ControlError('unknown_method', `unknown method ${JSON.stringify(request.method)}`);
      const result = await handler(request.params, connection);
      connection.answer({ v: 1, id, result: result ?? null });
    } catch (error) {
      if (!ControlError.isInstance(error)) options.onHandlerError?.(line, error);
      connection.answer({
        v: 1,
        id,
        error: ControlError.isInstance(error)
          ? { code: error.controlCode, message: error.message }
          : { code: 'failed', message: error instanceof Error ? error.message : String(error) },
      });
    }
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Owner-only from the first moment: the umask covers the window before the chmod.
    const umask = process.umask(0o077);
    try {
      server.listen(path, () => {
        server.off('error', reject);
        resolve();
      });
    } finally {
      process.umask(umask);
    }
  });
  chmodSync(path, 0o600);
  server.unref();

  let closing: Promise<void> | undefined;
  return {
    path,
    handle(method, handler) {
      if (!/^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)+$/.test(method))
        throw new TypeError(`a control method is a dotted lowercase name, got ${JSON.stringify(method)}`);
      handlers.set(method, handler);
    },
    publish(topic, event, params) {
      for (const connection of audiences.get(topic) ?? []) connection.send(event, params);
    },
    setInfo(patch) {
      if (patch.clientName !== undefined) info.clientName = patch.clientName;
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const connection of connections) connection.destroy();
        rmSync(path, { force: true });
      });
      return closing;
    },
  };
}

class Connection implements ControlConnection {
  private readonly listeners: (() => void)[] = [];
  private readonly topics = new Set<string>();
  closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly audiences: Map<string, Set<Connection>>,
  ) {
    socket.on('error', () => undefined);
    socket.on('close', () => this.finish());
  }

  answer(message: ControlAnswer): void {
    if (!this.closed) this.socket.write(encodeControlMessage(message));
  }

  send(event: string, params: unknown): void {
    if (!this.closed) this.socket.write(encodeControlMessage({ v: 1, event, params }));
  }

  subscribe(topic: string): void {
    if (this.closed) return;
    this.topics.add(topic);
    const audience = this.audiences.get(topic) ?? new Set<Connection>();
    this.audiences.set(topic, audience);
    audience.add(this);
  }

  unsubscribe(topic: string): void {
    this.topics.delete(topic);
    this.audiences.get(topic)?.delete(this);
  }

  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.listeners.push(listener);
  }

  destroy(): void {
    this.socket.destroy();
    this.finish();
  }

  private finish(): void {
    if (this.closed) return;
    this.closed = true;
    for (const topic of [...this.topics]) this.unsubscribe(topic);
    for (const listener of this.listeners.splice(0)) {
      try {
        listener();
      } catch {
        // A listener's failure must not keep the others from running.
      }
    }
  }
}
