import { closeSync } from 'node:fs';
import { ReadStream } from 'node:tty';
import { checkResizeSize, type ExecProcess, type ExitStatus, type TerminalSize } from '@ux/protocol/core';
import { OutputHub } from '@ux/protocol-utils';
import { exitStatusFrom } from './exit-status.js';
import type { NativeTerminal, NodePtyNative } from './node-pty-native.js';
import type { ProcessGroup } from './process-group.js';
import { PtyWriter } from './pty-writer.js';
import { PTY_DRAIN_MAX_MS, PTY_DRAIN_QUIET_MS } from './spawn-constants.js';

/**
 * A child on a PTY: it leads its own session, and its terminal output arrives as bytes.
 *
 * The host holds its own descriptor of the slave side while the child runs. Without it, the master
 * reports end-of-file the moment the child exits, while the child's last output may still be on its
 * way through the terminal layer, and that output is lost. After the exit, once output has been quiet
 * for a moment (or a short cap has passed), the host lets go and the master closes when every other
 * holder (background jobs of the command) has gone too.
 */
export class PtyProcess implements ExecProcess {
  readonly tty = true;
  readonly exited: Promise<ExitStatus>;
  readonly closed: Promise<void>;
  private readonly hub = new OutputHub();
  private readonly writer: PtyWriter;
  private readonly reader: ReadStream;
  private status: ExitStatus | undefined;
  private slaveFd: number | undefined;
  private lastOutputAt = Date.now();
  private resolveExited!: (status: ExitStatus) => void;
  /** Linux: whether its foreground processes are blocked reading the terminal (input-wait.ts). */
  waitingForInput?: () => boolean | undefined;

  constructor(
    private readonly native: NodePtyNative,
    private readonly terminal: NativeTerminal,
    slaveFd: number | undefined,
    private readonly group: ProcessGroup,
    probe?: () => boolean | undefined,
  ) {
    this.slaveFd = slaveFd;
    if (probe) this.waitingForInput = () => (this.status ? false : probe());
    this.writer = new PtyWriter(terminal.fd, terminal.pid);
    this.exited = new Promise((resolve) => {
      this.resolveExited = resolve;
    });
    this.reader = new ReadStream(terminal.fd);
    this.reader.on('data', (chunk: Buffer) => {
      this.lastOutputAt = Date.now();
      this.hub.emit(chunk);
    });
    // EIO is how a PTY master says every slave holder has gone; any read error ends the output.
    this.reader.on('error', () => {});
    this.closed = new Promise((resolve) => {
      this.reader.once('close', () => {
        this.writer.close();
        this.releaseSlave();
        group.leaderDone();
        resolve();
      });
    });
  }

  /** Called by the spawner when node-pty's waiter reaps the child. */
  onExit(code: number, signal: number): void {
    if (this.status) return;
    this.status = exitStatusFrom(code, signal);
    this.resolveExited(this.status);
    const exitedAt = Date.now();
    const drain = () => {
      const now = Date.now();
      if (now - this.lastOutputAt >= PTY_DRAIN_QUIET_MS || now - exitedAt >= PTY_DRAIN_MAX_MS)
        this.releaseSlave();
      else setTimeout(drain, PTY_DRAIN_QUIET_MS);
    };
    setTimeout(drain, PTY_DRAIN_QUIET_MS);
  }

  private releaseSlave(): void {
    if (this.slaveFd === undefined) return;
    const fd = this.slaveFd;
    this.slaveFd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Already closed; nothing else holds this number for us.
    }
  }

  get pid(): number | undefined {
    return this.terminal.pid;
  }

  onOutput(listener: (chunk: Uint8Array) => void): () => void {
    return this.hub.subscribe(listener);
  }

  async write(data: Uint8Array | string): Promise<void> {
    this.writer.enqueue(typeof data === 'string' ? Buffer.from(data, 'utf8') : data);
  }

  async interrupt(): Promise<void> {
    this.group.signal('SIGINT');
  }

  async terminate(): Promise<void> {
    this.group.terminate();
  }

  resize(size: TerminalSize): void {
    checkResizeSize(size);
    if (this.status) return;
    this.native.resize(this.terminal.fd, size.cols, size.rows);
  }

  exitStatus(): ExitStatus | undefined {
    return this.status;
  }
}
