import { TERMINATE_GRACE_MS } from '@ux/protocol/core';
import type { HostReaper } from './host-reaper.js';

/**
 * The process group a child leads (it was started with setsid, so pgid == pid). Signals go to the
 * whole group. Once the group is known to be empty, signals become no-ops: the number may be reused
 * by an unrelated group.
 */
export class ProcessGroup {
  private gone = false;
  private recheck: NodeJS.Timeout | undefined;
  private firstCheck: NodeJS.Immediate | undefined;
  private kill: NodeJS.Timeout | undefined;

  constructor(
    readonly pgid: number,
    private readonly reaper: HostReaper,
  ) {
    reaper.register(pgid);
  }

  signal(signal: NodeJS.Signals): void {
    if (this.gone) return;
    try {
      process.kill(-this.pgid, signal);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') this.release();
    }
  }

  /**
   * SIGTERM to the group now, SIGKILL to whatever of it is left after `graceMs`: programs get their
   * chance to clean up, and one that ignores SIGTERM (or a sandbox wrapper that passes it on) still
   * ends. The pending SIGKILL is dropped once the group is known to be empty.
   */
  terminate(graceMs = TERMINATE_GRACE_MS): void {
    if (this.gone) return;
    this.signal('SIGTERM');
    if (this.gone || this.kill) return;
    this.kill = setTimeout(() => {
      this.kill = undefined;
      this.signal('SIGKILL');
    }, graceMs);
    // It must not keep a host alive that has nothing else to do: when the host exits first, its reaper
    // SIGKILLs every group still registered. (A one-shot `ux exec` otherwise waited out the grace for
    // the already-finished shell snapshot capture: 500 ms of its 700.)
    this.kill.unref();
  }

  /**
   * Called when the leader's output has closed: the group is released once no member is left.
   * Members that outlive the leader (`cmd &`) keep the group guarded. The first checks come quickly,
   * because the leader itself is often still an unreaped zombie at this moment (and a registered
   * group keeps the host's reaper, and so the host, alive); then at most once a second.
   */
  leaderDone(): void {
    if (this.gone || this.recheck || this.firstCheck) return;
    // The first check waits for the loop's next turn: whoever waits on the output's close (a receipt)
    // answers first. The check throws for an empty group and tells the reaper, whose wake-up costs the
    // host tens of microseconds; a turn later the group is released just as surely.
    this.firstCheck = setImmediate(() => {
      this.firstCheck = undefined;
      this.checkMembers();
    });
  }

  private checkMembers(): void {
    let delay = 5;
    const check = () => {
      this.recheck = undefined;
      if (this.gone) return;
      if (!this.hasMembers()) {
        this.release();
        return;
      }
      this.recheck = setTimeout(check, delay);
      this.recheck.unref();
      delay = Math.min(delay * 2, 1000);
    };
    check();
  }

  private hasMembers(): boolean {
    try {
      process.kill(-this.pgid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  }

  private release(): void {
    if (this.gone) return;
    this.gone = true;
    if (this.recheck) clearTimeout(this.recheck);
    this.recheck = undefined;
    if (this.firstCheck) clearImmediate(this.firstCheck);
    this.firstCheck = undefined;
    if (this.kill) clearTimeout(this.kill);
    this.kill = undefined;
    this.reaper.unregister(this.pgid);
  }
}
