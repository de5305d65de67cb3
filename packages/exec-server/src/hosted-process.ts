import { fileURLToPath } from 'node:url';
import {
  type ExecProcess,
  type LaunchPlan,
  type OutputStream,
  type ReadResult,
  type SandboxBackend,
  StdinClosedError,
  type TerminalSize,
  UxError,
  type WriteStatus,
} from '@ux/protocol';
import { isSandboxDenial, readableText } from '@ux/protocol-utils';
import { encodeOutputNotification } from './encode-output-notification.js';
import {
  EXIT_OUTPUT_SETTLE_MS,
  MAX_READ_WAIT_MS,
  OUTPUT_CHUNK_MAX_BYTES,
  REMEMBERED_WRITE_IDS,
  RETAINED_OUTPUT_MAX_BYTES,
  RETAINED_OUTPUT_MAX_CHUNKS,
  SANDBOX_CLEANUP_MAX_MS,
} from './exec-server-constants.js';
import { internalError, invalidParams } from './rpc-error.js';

/**
 * Sends a notification (an object, or a message already encoded) to whoever is attached; `droppable`
 * ones may be skipped for a slow client.
 */
export type Notify = (message: Record<string, unknown> | Buffer, droppable: boolean) => void;

export interface HostedProcessOptions {
  processId: string;
  /** What it runs and where (for a person listing the host's processes: `ux ps`). */
  argv?: readonly string[];
  cwd?: string;
  /** The sandbox backend id, or `none`. */
  sandboxType?: string;
  process: ExecProcess;
  tty: boolean;
  /** stdin was asked for (`tty` or `pipeStdin`). */
  stdinOpen: boolean;
  /** The sandbox the process runs in, when one was applied. */
  sandbox?: { backend: SandboxBackend; plan: LaunchPlan };
  /** Resolves once the process closed and its sandbox was cleaned up (`launchPlanned` of `@ux/spawn`). */
  settled: Promise<void>;
  notify: Notify;
  /** Called once the process has exited, its output closed and its sandbox was cleaned up. */
  onClosed: () => void;
}

interface RetainedChunk {
  seq: number;
  stream: OutputStream;
  data: Uint8Array;
}

/**
 * One process of a session, as the protocol sees it: a per-process `seq` shared by output, exit and
 * close; output pushed as notifications and retained (1 MiB / 50 000 chunks) for `process/read`;
 * `writeId` de-duplication; exit reported after the output settles, with the sandbox-denied verdict.
 */
/** One hosted process as a person sees it (`ux ps` of an exec-server). */
export interface HostedProcessInfo {
  processId: string;
  argv: readonly string[];
  cwd: string;
  tty: boolean;
  sandbox: string;
  running: boolean;
  exitCode?: number;
  startedAt: number;
  lastOutputAt?: number;
  /** The last lines of its retained output (at most `count`). */
  lastLines: string[];
}

export class HostedProcess {
  readonly processId: string;
  readonly tty: boolean;
  readonly startedAt = Date.now();
  private lastOutputAt: number | undefined;
  private readonly argv: readonly string[];
  private readonly cwd: string;
  private readonly sandboxType: string;
  private readonly watchers = new Set<{ output(data: Uint8Array): void; exit(exitCode: number): void }>();
  private readonly process: ExecProcess;
  private readonly stdinOpen: boolean;
  private readonly sandbox: HostedProcessOptions['sandbox'];
  private readonly settled: Promise<void>;
  private readonly notify: Notify;
  private nextSeq = 1;
  private ring: RetainedChunk[] = [];
  private ringStart = 0;
  private ringBytes = 0;
  private exit: { exitCode: number; sandboxDenied: boolean } | undefined;
  private closedFlag = false;
  private readonly writeIds = new Set<string>();
  private readonly waiters = new Set<() => void>();
  private pendingParts: Uint8Array[] = [];
  private pendingBytes = 0;
  private pendingStream: OutputStream | undefined;
  private flushScheduled = false;

  constructor(options: HostedProcessOptions) {
    this.processId = options.processId;
    this.argv = options.argv ?? [];
    this.cwd = pathOfUri(options.cwd ?? '');
    this.sandboxType = options.sandboxType ?? (options.sandbox ? options.sandbox.backend.id : 'none');
    this.tty = options.tty;
    this.process = options.process;
    this.stdinOpen = options.stdinOpen;
    this.sandbox = options.sandbox;
    this.settled = options.settled;
    this.notify = options.notify;
    this.process.onOutput((chunk, source) => this.onOutput(chunk, this.tty ? 'pty' : (source ?? 'stdout')));
    // What the sandbox takes back (a protected path the command created) reaches the client the way
    // anything else the command sees does: as a line of its output, ux's own, so what the command
    // chose in it (a path) is shown as escapes, never as control characters.
    this.sandbox?.plan.onNotice?.((notice) => {
      const newline = this.tty ? '\r\n' : '\n';
      this.onOutput(
        Buffer.from(`${newline}[ux sandbox: ${readableText(notice.message)}]${newline}`, 'utf8'),
        this.tty ? 'pty' : 'stderr',
      );
    });
    void this.followExit().then(options.onClosed);
  }

  get sandboxed(): boolean {
    return this.sandbox !== undefined;
  }

  get closed(): boolean {
    return this.closedFlag;
  }

  /**
   * Output read in one turn of the event loop goes out as one chunk (up to 32 KiB): a fast writer's
   * pipe is read a few KiB at a time, and a message per read would cost more than the bytes.
   */
  private onOutput(data: Uint8Array, stream: OutputStream): void {
    if (this.pendingStream !== undefined && this.pendingStream !== stream) this.flushOutput();
    this.pendingStream = stream;
    this.pendingParts.push(data);
    this.pendingBytes += data.length;
    if (this.pendingBytes >= OUTPUT_CHUNK_MAX_BYTES) this.flushOutput();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => {
        this.flushScheduled = false;
        this.flushOutput();
      });
    }
  }

  private flushOutput(): void {
    const stream = this.pendingStream;
    if (stream === undefined || this.pendingBytes === 0) return;
    // One compact copy: a lone read is a view of Node's 64 KiB read buffer, and retaining views would
    // keep every whole read buffer alive (the 1 MiB ring could pin 16 MiB).
    const single = this.pendingParts.length === 1 ? this.pendingParts[0]! : undefined;
    const data =
      single && single.byteLength * 2 >= single.buffer.byteLength
        ? single
        : Buffer.concat(this.pendingParts, this.pendingBytes);
    this.pendingParts = [];
    this.pendingBytes = 0;
    this.pendingStream = undefined;
    const seq = this.nextSeq++;
    this.lastOutputAt = Date.now();
    this.retain({ seq, stream, data });
    for (const watcher of this.watchers) watcher.output(data);
    this.notify(encodeOutputNotification(this.processId, seq, stream, data), true);
    this.wake();
  }

  private retain(chunk: RetainedChunk): void {
    this.ring.push(chunk);
    this.ringBytes += chunk.data.length;
    while (
      this.ring.length - this.ringStart > 1 &&
      (this.ringBytes > RETAINED_OUTPUT_MAX_BYTES ||
        this.ring.length - this.ringStart > RETAINED_OUTPUT_MAX_CHUNKS)
    ) {
      this.ringBytes -= this.ring[this.ringStart]!.data.length;
      this.ring[this.ringStart] = undefined as unknown as RetainedChunk;
      this.ringStart += 1;
    }
    // Drop evicted slots in bulk, so eviction stays O(1) per chunk on average.
    if (this.ringStart > 1024 && this.ringStart * 2 > this.ring.length) {
      this.ring = this.ring.slice(this.ringStart);
      this.ringStart = 0;
    }
  }

  private async followExit(): Promise<void> {
    const status = await this.process.exited;
    // Output written just before the exit usually arrives within a moment; report it first.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.process.closed,
      new Promise((resolve) => {
        timer = setTimeout(resolve, EXIT_OUTPUT_SETTLE_MS);
      }),
    ]);
    clearTimeout(timer);
    this.flushOutput();
    const sandboxDenied = this.sandbox
      ? isSandboxDenial(
          this.sandbox.backend,
          { exitCode: status.exitCode, output: this.retainedText() },
          process.platform,
        )
      : false;
    this.exit = { exitCode: status.exitCode, sandboxDenied };
    for (const watcher of [...this.watchers]) watcher.exit(status.exitCode);
    this.watchers.clear();
    this.notify(
      {
        method: 'process/exited',
        params: { processId: this.processId, seq: this.nextSeq++, exitCode: status.exitCode, sandboxDenied },
      },
      false,
    );
    this.wake();
    await this.process.closed;
    // The sandbox's clean-up delivers its last notices (as output), so it comes before `closed`.
    let cleanupTimer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.settled,
      new Promise((resolve) => {
        cleanupTimer = setTimeout(resolve, SANDBOX_CLEANUP_MAX_MS);
      }),
    ]);
    clearTimeout(cleanupTimer);
    this.flushOutput();
    this.closedFlag = true;
    this.notify(
      { method: 'process/closed', params: { processId: this.processId, seq: this.nextSeq++ } },
      false,
    );
    this.wake();
  }

  /** What it is, for a person: command, state, the last `lines` lines of its retained output. */
  info(lines: number): HostedProcessInfo {
    const exitCode = this.exit?.exitCode ?? this.process.exitStatus()?.exitCode;
    const tail: Uint8Array[] = [];
    let bytes = 0;
    for (let i = this.ring.length - 1; i >= this.ringStart && bytes < 4096; i--) {
      const data = this.ring[i]!.data;
      tail.unshift(data);
      bytes += data.length;
    }
    const text = Buffer.concat(tail)
      .subarray(Math.max(0, bytes - 4096))
      .toString('utf8');
    const all = text.replace(/\r\n/g, '\n').split(/[\n\r]/);
    if (all.at(-1) === '') all.pop();
    return {
      processId: this.processId,
      argv: this.argv,
      cwd: this.cwd,
      tty: this.tty,
      sandbox: this.sandboxType,
      running: exitCode === undefined,
      ...(exitCode === undefined ? {} : { exitCode }),
      startedAt: this.startedAt,
      ...(this.lastOutputAt === undefined ? {} : { lastOutputAt: this.lastOutputAt }),
      lastLines: lines > 0 ? all.slice(-lines) : [],
    };
  }

  /**
   * Its output from now on and its exit (a person attached through the control socket), beside the
   * client's reads, which still get everything; returns the unsubscribe function.
   */
  watch(watcher: { output(data: Uint8Array): void; exit(exitCode: number): void }): () => void {
    if (this.exit !== undefined) {
      const { exitCode } = this.exit;
      queueMicrotask(() => watcher.exit(exitCode));
      return () => undefined;
    }
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }

  private retainedText(): string {
    const parts: Uint8Array[] = [];
    for (let i = this.ringStart; i < this.ring.length; i++) parts.push(this.ring[i]!.data);
    return Buffer.concat(parts).toString('utf8');
  }

  /** `process/read` (docs/reference/exec-server-protocol.md §5), long-polling up to `waitMs` for news. */
  async read(afterSeq: number, maxBytes: number | null, waitMs: number): Promise<ReadResult> {
    const exitedAtStart = this.exit !== undefined;
    const hasNews = () =>
      this.closedFlag || (!exitedAtStart && this.exit !== undefined) || this.lastSeqRetained() > afterSeq;
    const deadline = Date.now() + Math.min(waitMs, MAX_READ_WAIT_MS);
    while (!hasNews() && Date.now() < deadline) await this.waitForChange(deadline - Date.now());
    return this.snapshot(afterSeq, maxBytes);
  }

  private lastSeqRetained(): number {
    return this.ring.length > this.ringStart ? this.ring[this.ring.length - 1]!.seq : 0;
  }

  private snapshot(afterSeq: number, maxBytes: number | null): ReadResult {
    const chunks: ReadResult['chunks'] = [];
    let total = 0;
    for (let i = this.firstIndexAfter(afterSeq); i < this.ring.length; i++) {
      const { seq, stream, data } = this.ring[i]!;
      if (maxBytes !== null && chunks.length > 0 && total + data.length > maxBytes) break;
      chunks.push({ seq, stream, chunk: Buffer.from(data).toString('base64') });
      total += data.length;
    }
    const last = chunks.at(-1);
    return {
      chunks,
      nextSeq: maxBytes !== null && last ? last.seq + 1 : this.nextSeq,
      exited: this.exit !== undefined,
      exitCode: this.exit?.exitCode ?? null,
      closed: this.closedFlag,
      failure: null,
      sandboxDenied: this.exit?.sandboxDenied ?? false,
    };
  }

  private firstIndexAfter(afterSeq: number): number {
    let low = this.ringStart;
    let high = this.ring.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (this.ring[middle]!.seq <= afterSeq) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  private waitForChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  /** Wakes every pending read (on news, and at shutdown so none outlives the server). */
  wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /**
   * `process/write` (docs/reference/exec-server-protocol.md §5): de-duplicated by `writeId`; never an
   * error for a closed stdin.
   */
  async write(data: Uint8Array, writeId: string): Promise<WriteStatus> {
    if (!this.stdinOpen) return 'stdinClosed';
    if (this.writeIds.has(writeId)) return 'accepted';
    if (this.exit !== undefined || this.process.exitStatus() !== undefined) {
      // Codex accepts (and drops) writes to a finished terminal; a pipe's stdin is plainly closed.
      return this.tty ? 'accepted' : 'stdinClosed';
    }
    if (data.length === 0) return 'accepted';
    // The bytes are queued synchronously, so a repeated id arriving meanwhile is already a duplicate.
    const pending = this.process.write(data);
    this.rememberWriteId(writeId);
    try {
      await pending;
      return 'accepted';
    } catch (error) {
      this.writeIds.delete(writeId);
      if (StdinClosedError.isInstance(error)) return 'stdinClosed';
      if (UxError.isInstance(error)) throw internalError(error.message);
      throw error;
    }
  }

  private rememberWriteId(writeId: string): void {
    this.writeIds.add(writeId);
    if (this.writeIds.size > REMEMBERED_WRITE_IDS) {
      const oldest = this.writeIds.values().next().value;
      if (oldest !== undefined) this.writeIds.delete(oldest);
    }
  }

  /** Stops reading the output (back-pressure); a terminal's output cannot be paused and keeps flowing. */
  pauseOutput(): void {
    this.process.pauseOutput?.();
  }

  resumeOutput(): void {
    this.process.resumeOutput?.();
  }

  /** SIGINT to the process group; a no-op once it exited. */
  async interrupt(): Promise<void> {
    if (this.process.exitStatus() === undefined) await this.process.interrupt();
  }

  /**
   * SIGTERM to the process group, SIGKILL to what is left after a short grace (the spawner's
   * `terminate()`); says whether it was still running.
   */
  async terminate(): Promise<boolean> {
    const running = this.process.exitStatus() === undefined;
    if (running) await this.process.terminate();
    return running;
  }

  resize(size: TerminalSize): void {
    if (!this.process.resize) throw invalidParams(`process ${this.processId} has no terminal to resize`);
    try {
      this.process.resize(size);
    } catch (error) {
      throw invalidParams((error as Error).message);
    }
  }

  /** Kills the process and waits (bounded by the caller) until its output closed. */
  async kill(): Promise<void> {
    await this.process.terminate();
    await this.process.closed;
  }
}

/** A request's cwd (a file: URI on the wire) as a path, for people. */
function pathOfUri(cwd: string): string {
  if (!cwd.startsWith('file:')) return cwd;
  try {
    return fileURLToPath(cwd);
  } catch {
    return cwd;
  }
}
