import type { ReadResult } from '@ux/protocol';
import {
  checkResizeSize,
  type ExecProcess,
  type ExitStatus,
  type OutputSource,
  StdinClosedError,
  type TerminalSize,
  UX_EXEC_SERVER_CAPABILITIES,
} from '@ux/protocol/core';
import { OutputHub } from '@ux/protocol-utils';
import type { ExecServerClient, ProcessListener } from './exec-server-client.js';
import { loadProtocolSchemas } from './load-protocol-schemas.js';

/** How long a hole in the `seq` sequence may stay open before it is filled with `process/read`. */
export const SEQ_GAP_REPAIR_MS = 1_000;

type Event =
  | { kind: 'output'; stream: string; data: Buffer }
  | { kind: 'exited'; exitCode: number; sandboxDenied?: boolean }
  | { kind: 'closed' };

export interface RemoteProcessOptions {
  processId: string;
  tty: boolean;
  /** stdin was asked for (`tty`, or a pipe with `stdin: 'pipe'`). */
  stdinOpen: boolean;
  /** Who lost the connection, in the line that says so (`environment "box"`); default `the exec-server`. */
  serverName?: string;
  /**
   * Called when the connection is lost while the process lives: resolves with a connection that
   * resumed the session (the process goes on there, its missed output read back), or rejects with why
   * it could not (the process then ends as lost). Without it a lost connection ends the process.
   */
  resume?: (lost: ExecServerClient, reason: string) => Promise<ExecServerClient>;
}

/**
 * A process on an exec-server, as an `ExecProcess`: notifications put back in `seq` order (they can
 * arrive out of order, and before the start response), holes filled with `process/read` when they
 * stay open, writes with unique `writeId`s, Ctrl-C as `process/signal`, kill as `process/terminate`.
 * If the connection dies first, the output says so and the process ends with exit code -1.
 */
export class RemoteProcess implements ExecProcess, ProcessListener {
  readonly pid = undefined;
  readonly tty: boolean;
  private readonly serverName: string | undefined;
  readonly processId: string;
  readonly exited: Promise<ExitStatus>;
  readonly closed: Promise<void>;
  /** The sandbox the server says it applied (`none`, `linuxSeccomp`, …); set once started. */
  sandboxType = 'none';
  /** Why the process ended without the server reporting it (the connection was lost). */
  failure: string | undefined;
  resize?: (size: TerminalSize) => void;
  private readonly stdinOpen: boolean;
  private readonly hub = new OutputHub();
  private readonly early = new Map<number, Event>();
  private lastSeq = 0;
  private status: ExitStatus | undefined;
  private closedFlag = false;
  private writeCount = 0;
  private gapTimer: NodeJS.Timeout | undefined;
  private repairing = false;
  private resolveExited!: (status: ExitStatus) => void;
  private resolveClosed!: () => void;
  private unlisten: () => void = () => {};
  private readonly resume: RemoteProcessOptions['resume'];
  /** While the lost connection is being resumed: settles when the process is back or lost. */
  private suspended: Promise<void> | undefined;
  private lostReason: string | undefined;

  constructor(
    private client: ExecServerClient,
    options: RemoteProcessOptions,
  ) {
    this.processId = options.processId;
    this.resume = options.resume;
    this.tty = options.tty;
    this.stdinOpen = options.stdinOpen;
    this.serverName = options.serverName;
    this.exited = new Promise((resolve) => {
      this.resolveExited = resolve;
    });
    this.closed = new Promise((resolve) => {
      this.resolveClosed = resolve;
    });
    if (options.tty && client.can(UX_EXEC_SERVER_CAPABILITIES.processResize)) {
      this.resize = (size) => this.resizeRemote(size);
    }
    // Listen before the start request goes out: its notifications may overtake its response.
    this.unlisten = client.listen(this.processId, this);
  }

  onOutput(listener: (chunk: Uint8Array, stream?: OutputSource) => void): () => void {
    return this.hub.subscribe(listener);
  }

  exitStatus(): ExitStatus | undefined {
    return this.status;
  }

  /** The start failed: nothing will ever arrive for this id. */
  abandon(): void {
    this.unlisten();
    clearTimeout(this.gapTimer);
  }

  output(seq: number, stream: string, data: Buffer): void {
    this.accept(seq, { kind: 'output', stream, data });
  }

  notification(
    method: 'process/exited' | 'process/closed',
    params: { seq: number } & Record<string, unknown>,
  ): void {
    const event: Event =
      method === 'process/exited'
        ? {
            kind: 'exited',
            exitCode: Number(params.exitCode),
            ...(typeof params.sandboxDenied === 'boolean' ? { sandboxDenied: params.sandboxDenied } : {}),
          }
        : { kind: 'closed' };
    this.accept(params.seq, event);
  }

  private accept(seq: number, event: Event): void {
    if (seq <= this.lastSeq || this.closedFlag) return;
    this.early.set(seq, event);
    this.drain();
  }

  /** Publishes every event that is next in sequence; a remaining hole arms the repair timer. */
  private drain(): void {
    for (let next = this.early.get(this.lastSeq + 1); next; next = this.early.get(this.lastSeq + 1)) {
      this.early.delete(this.lastSeq + 1);
      this.lastSeq += 1;
      this.publish(next);
    }
    if (this.early.size > 0 && !this.gapTimer && !this.closedFlag) {
      this.gapTimer = setTimeout(() => void this.repairGap(), SEQ_GAP_REPAIR_MS);
      this.gapTimer.unref();
    } else if (this.early.size === 0) {
      clearTimeout(this.gapTimer);
      this.gapTimer = undefined;
    }
  }

  /**
   * Fills a hole with the server's retained output. Output evicted there is gone (the server keeps
   * 1 MiB), so after the read the sequence skips ahead to what did arrive.
   */
  private async repairGap(): Promise<void> {
    this.gapTimer = undefined;
    if (this.repairing || this.closedFlag || this.early.size === 0) return;
    this.repairing = true;
    try {
      const { readResultSchema } = await loadProtocolSchemas();
      const result = await this.client.request(
        'process/read',
        { processId: this.processId, afterSeq: this.lastSeq, maxBytes: null, waitMs: 0 },
        readResultSchema,
      );
      this.takeRetained(result.chunks);
    } catch {
      // The connection is going; its loss is reported on its own.
    } finally {
      this.repairing = false;
    }
    this.skipEvicted();
    this.drain();
  }

  /** Queues output the server kept (a `process/read`), in `seq` order with what arrived already. */
  private takeRetained(chunks: ReadResult['chunks']): void {
    for (const chunk of chunks) {
      if (chunk.seq > this.lastSeq && !this.early.has(chunk.seq))
        this.early.set(chunk.seq, {
          kind: 'output',
          stream: chunk.stream,
          data: Buffer.from(chunk.chunk, 'base64'),
        });
    }
  }

  /** Output the server no longer kept is gone: the sequence goes on from the first event it still has. */
  private skipEvicted(): void {
    if (this.early.size > 0 && !this.early.has(this.lastSeq + 1))
      this.lastSeq = Math.min(...this.early.keys()) - 1;
  }

  private publish(event: Event): void {
    switch (event.kind) {
      case 'output': {
        const stream = event.stream === 'stdout' || event.stream === 'stderr' ? event.stream : undefined;
        this.hub.emit(event.data, stream);
        return;
      }
      case 'exited':
        this.finishExit({
          exitCode: event.exitCode,
          ...(event.sandboxDenied === undefined ? {} : { sandboxDenied: event.sandboxDenied }),
        });
        return;
      case 'closed':
        this.finishClose();
        return;
    }
  }

  private finishExit(status: ExitStatus): void {
    if (this.status) return;
    this.status = status;
    this.resolveExited(status);
  }

  private finishClose(): void {
    if (this.closedFlag) return;
    this.closedFlag = true;
    this.abandon();
    this.resolveClosed();
  }

  connectionLost(reason: string): void {
    if (this.closedFlag || this.suspended) return;
    if (!this.resume) {
      this.lose(reason);
      return;
    }
    const since = Date.now();
    this.lostReason = reason;
    this.suspended = this.resume(this.client, reason)
      .then(
        (client) => this.rebind(client, reason, since),
        (error: unknown) => this.lose(`${reason}; ${(error as Error).message}`),
      )
      .finally(() => {
        this.suspended = undefined;
        this.lostReason = undefined;
      });
  }

  /**
   * Goes on over a connection that resumed the session: says so in the output, then reads back what
   * the server kept while nobody listened (and how the process ended, if it did meanwhile).
   */
  private async rebind(client: ExecServerClient, reason: string, since: number): Promise<void> {
    if (this.closedFlag) {
      // Given up while the resume was under way (terminate): end it there too.
      await client.request('process/terminate', { processId: this.processId }).catch(() => {});
      return;
    }
    this.unlisten();
    this.client = client;
    this.unlisten = client.listen(this.processId, this);
    if (client.closed) {
      this.lose(`${reason}; the resumed connection closed too (${client.closedReason})`);
      return;
    }
    const seconds = ((Date.now() - since) / 1000).toFixed(1);
    const server = this.serverName ?? 'the exec-server';
    this.hub.emit(
      Buffer.from(
        `\n[ux: the connection to ${server} was lost (${reason}) and resumed after ${seconds} s]\n`,
      ),
    );
    let result: ReadResult;
    try {
      const { readResultSchema } = await loadProtocolSchemas();
      result = await client.request(
        'process/read',
        { processId: this.processId, afterSeq: this.lastSeq, maxBytes: null, waitMs: 0 },
        readResultSchema,
      );
    } catch (error) {
      this.lose(
        `${reason}; after resuming, the server could not give its output back: ${(error as Error).message}`,
      );
      return;
    }
    this.takeRetained(result.chunks);
    this.skipEvicted();
    this.drain();
    // What was sent while nobody listened (an exit, say) comes from the read, not the notifications.
    this.lastSeq = Math.max(this.lastSeq, result.nextSeq - 1);
    this.drain();
    if (result.exited)
      this.finishExit({
        exitCode: result.exitCode ?? -1,
        ...(result.sandboxDenied ? { sandboxDenied: true } : {}),
      });
    if (result.closed) this.finishClose();
  }

  /** The process is lost with the connection: the output says so, and it ends with exit code -1. */
  private lose(reason: string): void {
    if (this.closedFlag) return;
    this.failure = reason;
    // Make the loss visible where the output is read: the process's fate is unknown from here on.
    const server = this.serverName ?? 'the exec-server';
    this.hub.emit(
      Buffer.from(`\n[ux: ${server} disconnected: ${reason}; what became of the process there is unknown]\n`),
    );
    this.finishExit({ exitCode: -1 });
    this.finishClose();
  }

  async write(data: Uint8Array | string): Promise<void> {
    if (!this.stdinOpen) throw new StdinClosedError({ processId: this.processId, reason: 'no_stdin' });
    // Input waits for a connection being resumed, then goes to the process there.
    if (this.suspended) await this.suspended;
    if (this.status || this.failure)
      throw new StdinClosedError({ processId: this.processId, reason: 'exited' });
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
    const { writeResultSchema } = await loadProtocolSchemas();
    this.writeCount += 1;
    const { status } = await this.client.request(
      'process/write',
      { processId: this.processId, chunk: bytes.toString('base64'), writeId: String(this.writeCount) },
      writeResultSchema,
    );
    if (status === 'accepted') return;
    throw new StdinClosedError({
      processId: this.processId,
      reason: status === 'stdinClosed' && !this.status ? 'no_stdin' : 'exited',
    });
  }

  async interrupt(): Promise<void> {
    if (this.suspended) await this.suspended;
    if (this.status || this.client.closed) return;
    await this.client
      .request('process/signal', { processId: this.processId, signal: 'interrupt' })
      .catch(() => {});
  }

  async terminate(): Promise<void> {
    if (this.suspended) {
      // Nobody waits for a resume to end a process: it is reported lost now, and ended on the server
      // if the session comes back.
      this.lose(`${this.lostReason ?? 'the connection was lost'}; ux stopped waiting for it to come back`);
      return;
    }
    if (this.status || this.client.closed) return;
    await this.client.request('process/terminate', { processId: this.processId }).catch(() => {});
  }

  private resizeRemote(size: TerminalSize): void {
    checkResizeSize(size);
    if (this.status) return;
    void this.client
      .request('process/resize', { processId: this.processId, rows: size.rows, cols: size.cols })
      .catch(() => {});
  }
}
