import type { ChildProcess } from 'node:child_process';
import type { ExecProcess, ExitStatus, OutputSource } from '@ux/protocol/core';
import { OutputHub } from '@ux/protocol-utils';
import { exitStatusFrom } from './exit-status.js';
import type { ProcessGroup } from './process-group.js';
import { writeChildStdin } from './write-child-stdin.js';

/** A child on pipes: stdout and stderr merged in arrival order, stdin a pipe or /dev/null. */
export class PipeProcess implements ExecProcess {
  readonly tty = false;
  readonly exited: Promise<ExitStatus>;
  readonly closed: Promise<void>;
  private readonly hub = new OutputHub();
  private status: ExitStatus | undefined;
  /** Linux, with a stdin pipe: whether it is blocked reading that pipe (input-wait.ts). */
  waitingForInput?: () => boolean | undefined;

  constructor(
    private readonly child: ChildProcess,
    private readonly group: ProcessGroup,
    probe?: () => boolean | undefined,
  ) {
    if (probe) this.waitingForInput = () => (this.status ? false : probe());
    child.stdout?.on('data', (chunk: Buffer) => this.hub.emit(chunk, 'stdout'));
    child.stderr?.on('data', (chunk: Buffer) => this.hub.emit(chunk, 'stderr'));
    // Writes to a child that stopped reading end in EPIPE; the write already resolved.
    child.stdin?.on('error', () => {});
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.status = exitStatusFrom(code, signal);
        resolve(this.status);
      });
    });
    this.closed = new Promise((resolve) => {
      child.once('close', () => {
        group.leaderDone();
        resolve();
      });
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  onOutput(listener: (chunk: Uint8Array, stream?: OutputSource) => void): () => void {
    return this.hub.subscribe(listener);
  }

  /** Queues bytes for the child. Resolves once queued; refuses when the child is not reading. */
  async write(data: Uint8Array | string): Promise<void> {
    writeChildStdin(this.child.stdin, this.pid, this.status !== undefined, data);
  }

  pauseOutput(): void {
    this.child.stdout?.pause();
    this.child.stderr?.pause();
  }

  resumeOutput(): void {
    this.child.stdout?.resume();
    this.child.stderr?.resume();
  }

  async interrupt(): Promise<void> {
    this.group.signal('SIGINT');
  }

  async terminate(): Promise<void> {
    this.group.terminate();
  }

  exitStatus(): ExitStatus | undefined {
    return this.status;
  }
}
