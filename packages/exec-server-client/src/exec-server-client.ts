import type { EnvironmentInfo, RequestId } from '@ux/protocol';
import { decodeBase64, markError, type OutputStream, UxError, WireErrorCode } from '@ux/protocol/core';
import { ExecServerConnectionError } from './exec-server-connection-error.js';
import type { ExecServerTransport } from './exec-server-transport.js';
import { loadProtocolSchemas, type ProtocolSchemas } from './load-protocol-schemas.js';

const EXEC_SERVER_REQUEST_FAILED = 'ux.error.exec-server-request';

/** An error answer from the server, or a transport that ended before the answer came. */
export class ExecServerRequestError extends UxError {
  constructor(
    readonly method: string,
    /** The JSON-RPC error code of the answer (`WireErrorCode`). */
    readonly wireCode: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('exec_server_request_failed', message, options);
    this.name = 'ExecServerRequestError';
    markError(this, EXEC_SERVER_REQUEST_FAILED);
  }

  static override isInstance(error: unknown): error is ExecServerRequestError {
    return UxError.hasMarker(error, EXEC_SERVER_REQUEST_FAILED);
  }

  /** The connection is gone (code -32000, as Codex's client reports it). */
  get transportClosed(): boolean {
    return this.wireCode === WireErrorCode.TransportClosed;
  }

  override toJSON() {
    return { ...super.toJSON(), method: this.method, wireCode: this.wireCode };
  }
}

interface ResultSchema<T> {
  safeParse(value: unknown): { success: true; data: T } | { success: false; error: { message: string } };
}

/** Receives the notifications of one process; registered before its `process/start` is sent. */
export interface ProcessListener {
  /** A `process/output` notification, its chunk already decoded. */
  output(seq: number, stream: OutputStream, data: Buffer): void;
  /** `process/exited` or `process/closed`. */
  notification(
    method: 'process/exited' | 'process/closed',
    params: { seq: number } & Record<string, unknown>,
  ): void;
  connectionLost(reason: string): void;
}

const OUTPUT_STREAMS: ReadonlySet<string> = new Set(['stdout', 'stderr', 'pty']);

export interface ExecServerClientOptions {
  /** `initialize.clientName`; default `ux`. */
  clientName?: string;
  /** How long the handshake may take; default 10000 ms (as Codex). */
  initializeTimeoutMs?: number;
  /** Told about messages that break the protocol (they are dropped). */
  onProtocolError?: (message: string) => void;
  /** Resume this session (`initialize.resumeSessionId`) instead of starting a new one. */
  resumeSessionId?: string;
}

/**
 * One handshaken connection to an exec-server: requests with validated results, notifications routed
 * to the process they name. Hand-rolled framing, since the server's messages carry no `jsonrpc`.
 */
export class ExecServerClient {
  private nextId = 1;
  private readonly pending = new Map<
    RequestId,
    { method: string; resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  private readonly processes = new Map<string, ProcessListener>();
  private closeReason: string | undefined;
  private readonly onProtocolError: (message: string) => void;
  sessionId = '';
  environmentInfo: EnvironmentInfo;

  private constructor(
    private readonly transport: ExecServerTransport,
    private readonly schemas: ProtocolSchemas,
    options: ExecServerClientOptions,
  ) {
    this.environmentInfo = schemas.environmentInfoSchema.parse({});
    this.onProtocolError = options.onProtocolError ?? (() => {});
    transport.onMessage((text) => this.receive(text));
    transport.onClose((reason) => this.lost(reason));
  }

  /**
   * Performs the handshake (`initialize`, then the required `initialized`; `environment/info` when the
   * server did not send it). Rejects, and closes the transport, when it fails or times out. The
   * protocol's schemas are loaded here, on the first connection.
   */
  static async connect(
    transport: ExecServerTransport,
    options: ExecServerClientOptions = {},
  ): Promise<ExecServerClient> {
    const timeoutMs = options.initializeTimeoutMs ?? 10_000;
    let timer: NodeJS.Timeout | undefined;
    try {
      const schemas = await loadProtocolSchemas();
      const { environmentInfoSchema, INITIALIZED_NOTIFICATION, initializeResultSchema } = schemas;
      const client = new ExecServerClient(transport, schemas, options);
      const result = await Promise.race([
        client.request(
          'initialize',
          { clientName: options.clientName ?? 'ux', resumeSessionId: options.resumeSessionId ?? null },
          initializeResultSchema,
        ),
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new ExecServerConnectionError(
                  'handshake',
                  `the exec-server \`${transport.description}\` did not answer initialize within ${timeoutMs} ms`,
                ),
              ),
            timeoutMs,
          );
        }),
      ]);
      client.sessionId = result.sessionId;
      client.notify(INITIALIZED_NOTIFICATION, {});
      client.environmentInfo =
        result.environmentInfo ?? (await client.request('environment/info', null, environmentInfoSchema));
      return client;
    } catch (error) {
      await transport.close();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  get closed(): boolean {
    return this.closeReason !== undefined;
  }

  /** Why the connection ended, once it has. */
  get closedReason(): string | undefined {
    return this.closeReason;
  }

  /** Whether the server advertises a capability flag. */
  can(capability: string): boolean {
    return this.environmentInfo.capabilities[capability] === true;
  }

  /** Sends a request; resolves with its result (checked against `schema` when given). */
  request<T = unknown>(method: string, params: unknown, schema?: ResultSchema<T>): Promise<T> {
    if (this.closeReason !== undefined) {
      return Promise.reject(
        new ExecServerRequestError(
          method,
          WireErrorCode.TransportClosed,
          `${method} not sent: ${this.closeReason}`,
        ),
      );
    }
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      this.pending.set(id, { method, resolve, reject });
      this.transport.send(JSON.stringify(params === undefined ? { id, method } : { id, method, params }));
    }).then((result) => {
      if (!schema) return result as T;
      const parsed = schema.safeParse(result);
      if (!parsed.success) {
        throw new ExecServerRequestError(
          method,
          WireErrorCode.InternalError,
          `the exec-server answered ${method} with an invalid result: ${parsed.error.message}`,
        );
      }
      return parsed.data;
    });
  }

  private notify(method: string, params: unknown): void {
    if (this.closeReason === undefined) this.transport.send(JSON.stringify({ method, params }));
  }

  /** Routes a process's notifications to `listener` until the returned function is called. */
  listen(processId: string, listener: ProcessListener): () => void {
    this.processes.set(processId, listener);
    if (this.closeReason !== undefined) listener.connectionLost(this.closeReason);
    return () => {
      if (this.processes.get(processId) === listener) this.processes.delete(processId);
    };
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  private receive(text: string): void {
    if (text.startsWith('{"method":"process/output"') && this.receiveOutput(text)) return;
    const parsed = this.schemas.parseWireMessage(text);
    switch (parsed.kind) {
      case 'invalid':
        this.onProtocolError(`dropped an unreadable message from the exec-server: ${parsed.reason}`);
        return;
      case 'response':
      case 'error': {
        const entry = this.pending.get(parsed.message.id);
        if (!entry) {
          const detail = parsed.kind === 'error' ? `: ${parsed.message.error.message}` : '';
          this.onProtocolError(
            `the exec-server answered an unknown request id ${JSON.stringify(parsed.message.id)}${detail}`,
          );
          return;
        }
        this.pending.delete(parsed.message.id);
        if (parsed.kind === 'response') entry.resolve(parsed.message.result);
        else {
          const { code, message } = parsed.message.error;
          entry.reject(new ExecServerRequestError(entry.method, code, message));
        }
        return;
      }
      case 'request':
        // Only the managed-network feature sends requests, and this client never asks for it.
        this.transport.send(
          JSON.stringify({
            id: parsed.message.id,
            error: {
              code: WireErrorCode.MethodNotFound,
              message: `this client does not handle \`${parsed.message.method}\``,
            },
          }),
        );
        return;
      case 'notification':
        this.onNotification(parsed.message.method, parsed.message.params);
        return;
    }
  }

  /**
   * The hot path: output notifications are most of the traffic. The same checks as the schema, by
   * hand, with the base64 decoded once for both checking and use. Returns false to fall back to the
   * general path (which reports what is wrong).
   */
  private receiveOutput(text: string): boolean {
    let message: { method?: unknown; params?: Record<string, unknown>; id?: unknown };
    try {
      message = JSON.parse(text);
    } catch {
      return false;
    }
    const params = message.params;
    if (message.id !== undefined || typeof params !== 'object' || params === null) return false;
    const { processId, seq, stream, chunk } = params;
    if (
      typeof processId !== 'string' ||
      !Number.isInteger(seq) ||
      typeof stream !== 'string' ||
      !OUTPUT_STREAMS.has(stream) ||
      typeof chunk !== 'string'
    ) {
      return false;
    }
    const data = decodeBase64(chunk);
    if (!data) return false;
    this.processes.get(processId)?.output(seq as number, stream as OutputStream, data);
    return true;
  }

  private onNotification(method: string, params: unknown): void {
    const { execServerNotifications } = this.schemas;
    if (!(method in execServerNotifications)) return;
    const name = method as keyof typeof execServerNotifications;
    const parsed = execServerNotifications[name].safeParse(params);
    if (!parsed.success) {
      this.onProtocolError(`dropped a malformed ${method} notification: ${parsed.error.message}`);
      return;
    }
    const listener = this.processes.get(parsed.data.processId);
    if (!listener) return;
    if (name === 'process/output') {
      const output = parsed.data as unknown as { seq: number; stream: OutputStream; chunk: string };
      listener.output(output.seq, output.stream, Buffer.from(output.chunk, 'base64'));
    } else listener.notification(name, parsed.data);
  }

  private lost(reason: string): void {
    if (this.closeReason !== undefined) return;
    this.closeReason = reason;
    for (const [id, entry] of this.pending) {
      this.pending.delete(id);
      entry.reject(
        new ExecServerRequestError(
          entry.method,
          WireErrorCode.TransportClosed,
          `${entry.method} failed: ${reason}`,
        ),
      );
    }
    for (const listener of [...this.processes.values()]) listener.connectionLost(reason);
  }
}
