import { STATUS_CONTROL_C_EXIT, WINDOWS_TERMINATE_EXIT_CODE } from './windows-exit-status.js';
import type { WindowsJob } from './windows-job-objects.js';

/**
 * A Windows child and everything it starts: with a job object, ending it is TerminateJobObject on the
 * whole job; without one, only the child itself is ended (`killDirect`), and what it started may live on
 * (a sandbox launcher of `@ux/sandbox-windows-token` still takes its command's tree down with it: the
 * command runs in the launcher's own kill-on-close job). Windows has no signals, so an interrupt that
 * cannot be delivered as Ctrl-C ends the tree with STATUS_CONTROL_C_EXIT, as an unhandled Ctrl-C would.
 */
export class WindowsProcessTree {
  /** What the host last asked for; the exit status is read in its light. */
  requested: 'interrupt' | 'terminate' | undefined;
  private released = false;
  private job: WindowsJob | undefined;

  constructor(private readonly killDirect: () => void) {}

  get hasJob(): boolean {
    return this.job !== undefined;
  }

  /** The child's job, once it is in one. After `release()` the job is closed at once. */
  attach(job: WindowsJob): void {
    this.job = job;
    if (this.released) this.closeJob();
  }

  /** Ends the tree: `interrupt` with STATUS_CONTROL_C_EXIT, `terminate` with the terminate code. */
  end(reason: 'interrupt' | 'terminate'): void {
    if (this.released) return;
    if (this.requested !== 'terminate') this.requested = reason;
    try {
      if (this.job)
        this.job.terminate(reason === 'interrupt' ? STATUS_CONTROL_C_EXIT : WINDOWS_TERMINATE_EXIT_CODE);
      else this.killDirect();
    } catch {
      // The job or the child is already gone: nothing is left to end.
    }
  }

  /**
   * Called once the child's output has closed: the job handle is closed, and kill-on-close ends anything
   * the command left running that no longer holds its output. Later `end()` calls do nothing.
   */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.closeJob();
  }

  private closeJob(): void {
    const job = this.job;
    this.job = undefined;
    try {
      job?.close();
    } catch {
      // Closing a handle the host already lost: nothing more to free.
    }
  }
}
