import {
  checkResizeSize,
  type ExecProcess,
  type ExitStatus,
  StdinClosedError,
  type TerminalSize,
  UxError,
} from '@ux/protocol/core';
import { OutputHub } from '@ux/protocol-utils';
import { MAX_STDIN_QUEUED_BYTES } from './spawn-constants.js';
import { windowsExitStatus } from './windows-exit-status.js';
import type { WindowsProcessTree } from './windows-process-tree.js';

/** The part of node-pty's `IPty` the Windows spawner uses (a ConPTY terminal). */
export interface WindowsPty {
  readonly pid: number;
  onData(listener: (data: string) => void): { dispose(): void };
  onExit(listener: (event: { exitCode: number; signal?: number }) => void): { dispose(): void };
  write(data: string | Buffer): void;
  resize(cols: number, rows: number): void;
  /** Ends the console's processes and closes the pseudo console (no signal argument on Windows). */
  kill(): void;
}

/** Ctrl-C as a ConPTY reads it: the console turns it into CTRL_C_EVENT for every attached process. */
export const CONPTY_CTRL_C = '\x03';

/**
 * A Windows child on a ConPTY (node-pty). Output is what ConPTY renders, UTF-8 text with VT sequences
 * (not the program's own bytes). node-pty reports the exit only after the output pipe has closed, so the
 * exit and the end of output arrive together. An interrupt is Ctrl-C typed into the console; terminate
 * ends the tree through its job object.
 */
export class WindowsPtyProcess implements ExecProcess {
  readonly tty = true;
  readonly exited: Promise<ExitStatus>;
  readonly closed: Promise<void>;
  private readonly hub = new OutputHub();
  private status: ExitStatus | undefined;

  constructor(
    private readonly pty: WindowsPty,
    private readonly tree: WindowsProcessTree,
  ) {
    pty.onData((data) => this.hub.emit(Buffer.from(data, 'utf8')));
    let resolveClosed!: () => void;
    this.closed = new Promise((resolve) => {
      resolveClosed = resolve;
    });
    this.exited = new Promise((resolve) => {
      pty.onExit(({ exitCode }) => {
        if (this.status) return;
        this.status = windowsExitStatus(exitCode, null, tree.requested);
        resolve(this.status);
        tree.release();
        resolveClosed();
      });
    });
  }

  get pid(): number | undefined {
    return this.pty.pid;
  }

  onOutput(listener: (chunk: Uint8Array) => void): () => void {
    return this.hub.subscribe(listener);
  }

  async write(data: Uint8Array | string): Promise<void> {
    if (this.status) throw new StdinClosedError({ processId: this.pid, reason: 'exited' });
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : Buffer.from(data);
    if (bytes.length > MAX_STDIN_QUEUED_BYTES) {
      throw new UxError(
        'invalid_arguments',
        `refusing to write ${bytes.length} bytes at once to a terminal (limit ${MAX_STDIN_QUEUED_BYTES})`,
      );
    }
    if (bytes.length > 0) this.pty.write(bytes);
  }

  /** Ctrl-C into the console (CTRL_C_EVENT for its processes); a program that handles it keeps running. */
  async interrupt(): Promise<void> {
    if (this.status) return;
    try {
      this.pty.write(CONPTY_CTRL_C);
    } catch {
      // The console is already closing.
    }
  }

  async terminate(): Promise<void> {
    this.tree.end('terminate');
  }

  resize(size: TerminalSize): void {
    checkResizeSize(size);
    if (this.status) return;
    this.pty.resize(size.cols, size.rows);
  }

  exitStatus(): ExitStatus | undefined {
    return this.status;
  }
}
