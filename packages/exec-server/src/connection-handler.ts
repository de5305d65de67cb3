import {
  type EnvironmentInfo,
  execParamsSchema,
  INITIALIZED_NOTIFICATION,
  initializeParamsSchema,
  parseWireMessage,
  type RequestId,
  readParamsSchema,
  resizeParamsSchema,
  signalParamsSchema,
  terminateParamsSchema,
  WireErrorCode,
  writeParamsSchema,
} from '@ux/protocol';
import { readableText } from '@ux/protocol-utils';
import {
  OUTPUT_NOTIFICATION_HIGH_WATER_BYTES,
  OUTPUT_PAUSE_BYTES,
  OUTPUT_RESUME_BYTES,
} from './exec-server-constants.js';

/** How often a paused session checks whether the client caught up. */
const BACK_PRESSURE_POLL_MS = 2;

import type { ExecServerSession } from './exec-server-session.js';
import { fsMethods } from './fs-methods.js';
import { parseParams } from './parse-params.js';
import { internalError, invalidRequest, RpcError } from './rpc-error.js';

/** One client connection as the server sees it: where messages go, and how much is still unsent. */
export interface ServerConnection {
  /** Sends one message (JSON text, or its UTF-8 bytes); the transport frames it. */
  send(message: string | Buffer): void;
  /** Bytes handed to `send` and not yet written (used to skip output notifications for a slow client). */
  readonly pendingBytes: number;
  close(): void;
}

/** What a connection needs from the server it belongs to. */
export interface ConnectionHost {
  newSession(): ExecServerSession;
  /** A detached session by id, or why it cannot be resumed. */
  resumeSession(sessionId: string): ExecServerSession | RpcError;
  /** Called when a connection ends; the host keeps or kills the session's processes. */
  sessionDetached(session: ExecServerSession): void;
  environmentInfo(): Promise<EnvironmentInfo>;
  log(line: string): void;
}

type Phase = 'new' | 'initializing' | 'ready' | 'closed';

/** The family word Codex uses in its handshake errors. */
function family(method: string): string {
  if (method.startsWith('process/')) return 'exec';
  if (method.startsWith('fs/')) return 'filesystem';
  return 'environment info';
}

/**
 * The protocol on one connection: every message validated; the `initialize` → `initialized` gate;
 * requests handled concurrently (a long `process/read` never holds up a `process/terminate`); every
 * failure answered as a JSON-RPC error that names the problem. The connection survives bad input.
 */
export class ConnectionHandler {
  private phase: Phase = 'new';
  private backPressure: NodeJS.Timeout | undefined;
  /** Requests received and not answered yet. */
  private readonly inFlight = new Set<Promise<void>>();
  private session: ExecServerSession | undefined;
  private readonly methods: Record<string, (params: unknown) => Promise<unknown>>;

  constructor(
    private readonly connection: ServerConnection,
    private readonly host: ConnectionHost,
  ) {
    this.methods = {
      'environment/info': () => this.host.environmentInfo(),
      'environment/status': async () => ({ status: 'ready' }),
      'process/start': (raw) => this.requireSession().start(parseParams(execParamsSchema, raw)),
      'process/read': async (raw) => {
        const params = parseParams(readParamsSchema, raw);
        return this.requireSession()
          .require(params.processId)
          .read(params.afterSeq ?? 0, params.maxBytes ?? null, params.waitMs ?? 0);
      },
      'process/write': async (raw) => {
        const params = parseParams(writeParamsSchema, raw);
        const entry = this.requireSession().lookup(params.processId);
        if (entry === undefined) return { status: 'unknownProcess' };
        if (entry === 'starting') return { status: 'starting' };
        return { status: await entry.write(Buffer.from(params.chunk, 'base64'), params.writeId) };
      },
      'process/signal': async (raw) => {
        const params = parseParams(signalParamsSchema, raw);
        const entry = this.requireSession().lookup(params.processId);
        if (entry && entry !== 'starting') await entry.interrupt();
        return {};
      },
      'process/terminate': async (raw) => {
        const params = parseParams(terminateParamsSchema, raw);
        const entry = this.requireSession().lookup(params.processId);
        return { running: entry !== undefined && entry !== 'starting' ? await entry.terminate() : false };
      },
      'process/resize': async (raw) => {
        const params = parseParams(resizeParamsSchema, raw);
        this.requireSession().require(params.processId).resize({ rows: params.rows, cols: params.cols });
        return {};
      },
      ...fsMethods,
    };
  }

  /** One incoming message text (a line on stdio, a frame on WebSocket). */
  receive(text: string): void {
    if (this.phase === 'closed') return;
    if (text.trim() === '') return;
    const parsed = parseWireMessage(text);
    switch (parsed.kind) {
      case 'invalid':
        this.replyError(
          -1,
          WireErrorCode.InvalidRequest,
          `failed to parse JSON-RPC message: ${parsed.reason}`,
        );
        return;
      case 'response':
      case 'error':
        // This server sends no requests, so no response can be expected.
        this.replyError(
          -1,
          WireErrorCode.InvalidRequest,
          `unexpected response with id ${JSON.stringify(parsed.message.id)}: this server sends no requests`,
        );
        return;
      case 'notification':
        this.onNotification(parsed.message.method);
        return;
      case 'request': {
        const answered = this.onRequest(parsed.message.id, parsed.message.method, parsed.message.params);
        this.inFlight.add(answered);
        void answered.finally(() => this.inFlight.delete(answered));
        return;
      }
    }
  }

  /** Resolves once every request received so far has been answered. */
  async drained(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** A message the transport could not hand over (too large, binary) was skipped. */
  unreadable(reason: string): void {
    this.replyError(-1, WireErrorCode.InvalidRequest, `failed to parse JSON-RPC message: ${reason}`);
  }

  /** The transport closed: detach the session (its processes are the host's to keep or kill). */
  disconnected(): void {
    if (this.phase === 'closed') return;
    this.phase = 'closed';
    if (this.session) {
      this.session.attach(undefined);
      this.host.sessionDetached(this.session);
    }
  }

  private onNotification(method: string): void {
    if (method !== INITIALIZED_NOTIFICATION) {
      this.replyError(-1, WireErrorCode.MethodNotFound, `unknown notification \`${method}\``);
      return;
    }
    if (this.phase === 'new') {
      this.replyError(
        -1,
        WireErrorCode.InvalidRequest,
        '`initialized` received before `initialize`; send `initialize` first',
      );
      return;
    }
    if (this.phase === 'initializing') this.phase = 'ready';
  }

  private async onRequest(id: RequestId, method: string, params: unknown): Promise<void> {
    try {
      const result = await this.dispatch(method, params);
      this.send({ id, result });
    } catch (error) {
      if (RpcError.isInstance(error)) this.replyError(id, error.wireCode, error.message);
      else {
        this.host.log(`exec-server: ${method} failed: ${logText(error)}`);
        this.replyError(id, WireErrorCode.InternalError, `${method} failed: ${(error as Error).message}`);
      }
    }
  }

  private async dispatch(method: string, params: unknown): Promise<unknown> {
    if (method === 'initialize') return this.initialize(params);
    const run = this.methods[method];
    if (!run)
      throw new RpcError(WireErrorCode.MethodNotFound, `exec-server does not implement \`${method}\``);
    if (this.phase === 'new') {
      throw invalidRequest(`client must call initialize before using ${family(method)} methods`);
    }
    if (this.phase === 'initializing') {
      throw invalidRequest(`client must send initialized before using ${family(method)} methods`);
    }
    if (params === null)
      throw new RpcError(WireErrorCode.InvalidParams, `${method}: params must be an object, not null`);
    return run(params);
  }

  private async initialize(raw: unknown): Promise<unknown> {
    if (this.phase !== 'new') throw invalidRequest('initialize may only be sent once per connection');
    const params = parseParams(initializeParamsSchema, raw);
    let session: ExecServerSession;
    if (params.resumeSessionId) {
      const found = this.host.resumeSession(params.resumeSessionId);
      if (RpcError.isInstance(found)) throw found;
      session = found;
    } else {
      session = this.host.newSession();
    }
    // The handshake is claimed before any await, so a second initialize in flight is refused.
    this.phase = 'initializing';
    this.session = session;
    session.attach((message, droppable) => {
      if (this.phase === 'closed') return;
      const backlog = this.connection.pendingBytes;
      if (droppable && backlog > OUTPUT_NOTIFICATION_HIGH_WATER_BYTES) return;
      this.connection.send(Buffer.isBuffer(message) ? message : JSON.stringify(message));
      if (droppable && backlog > OUTPUT_PAUSE_BYTES) this.applyBackPressure(session);
    });
    return { sessionId: session.id, environmentInfo: await this.host.environmentInfo() };
  }

  /** Pauses the session's output until the client has read most of the backlog. */
  private applyBackPressure(session: ExecServerSession): void {
    if (this.backPressure) return;
    session.setOutputPaused(true);
    this.backPressure = setInterval(() => {
      if (this.phase !== 'closed' && this.connection.pendingBytes > OUTPUT_RESUME_BYTES) return;
      clearInterval(this.backPressure);
      this.backPressure = undefined;
      session.setOutputPaused(false);
    }, BACK_PRESSURE_POLL_MS);
  }

  private requireSession(): ExecServerSession {
    if (!this.session) throw internalError('no session');
    return this.session;
  }

  private send(message: unknown): void {
    if (this.phase === 'closed') return;
    this.connection.send(JSON.stringify(message));
  }

  private replyError(id: RequestId, code: number, message: string): void {
    this.send({ error: { code, message }, id });
  }
}

/**
 * An unexpected error for the server's log: its message (which may quote a command's words, say a
 * program that failed to start) with escapes instead of control characters, then the stack's frames.
 */
function logText(error: unknown): string {
  if (!(error instanceof Error)) return readableText(String(error));
  const frames = (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));
  return [`${error.name}: ${readableText(error.message)}`, ...frames.map(readableText)].join('\n');
}
