import type { ChildProcess } from 'node:child_process';
import type { ExecProcess, ExitStatus, OutputSource } from '@ux/protocol/core';
import { OutputHub } from '@ux/protocol-utils';
import { windowsExitStatus } from './windows-exit-status.js';
import type { WindowsProcessTree } from './windows-process-tree.js';
import { writeChildStdin } from './write-child-stdin.js';

/**
 * A Windows child on pipes (child_process): stdout and stderr merged in arrival order, stdin a pipe or
 * nothing. Interrupt and terminate end the whole tree through its job object (`WindowsProcessTree`): a
 * child on pipes has a hidden console of its own, which the host cannot send a Ctrl-C to.
 */
export class WindowsPipeProcess implements ExecProcess {
  readonly tty = false;
  readonly exited: Promise<ExitStatus>;
  readonly closed: Promise<void>;
  private readonly hub = new OutputHub();
  private status: ExitStatus | undefined;

  constructor(
    private readonly child: ChildProcess,
    private readonly tree: WindowsProcessTree,
  ) {
    child.stdout?.on('data', (chunk: Buffer) => this.hub.emit(chunk, 'stdout'));
    child.stderr?.on('data', (chunk: Buffer) => this.hub.emit(chunk, 'stderr'));
    child.stdin?.on('error', () => {});
    // A failed kill() of an exited child is reported as an 'error' event; it changes nothing.
    child.on('error', () => {});
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.status = windowsExitStatus(code, signal, tree.requested);
        resolve(this.status);
      });
    });
    this.closed = new Promise((resolve) => {
      child.once('close', () => {
        tree.release();
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

  /** Ends the tree with STATUS_CONTROL_C_EXIT (reported as 130, SIGINT). */
  async interrupt(): Promise<void> {
    this.tree.end('interrupt');
  }

  /** TerminateJobObject at once (reported as 137, SIGKILL): Windows has no SIGTERM to give a grace for. */
  async terminate(): Promise<void> {
    this.tree.end('terminate');
  }

  exitStatus(): ExitStatus | undefined {
    return this.status;
  }
}
