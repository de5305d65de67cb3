import { type ChildProcess, spawn } from 'node:child_process';
import { HOST_REAPER_NAME } from './spawn-constants.js';

/**
 * A small shell process that outlives the host only long enough to kill what the host started.
 * The host writes `+<pgid>` and `-<pgid>` lines as process groups come and go; when the host dies for
 * any reason (even SIGKILL) the pipe reaches end-of-file and the reaper SIGKILLs every group still
 * listed, grandchildren included. It runs in its own session and ignores terminal signals, so a
 * Ctrl-C that kills the host does not kill it first.
 */
const SCRIPT = `trap '' INT TERM HUP QUIT PIPE
live=' '
while IFS= read -r line; do
  case $line in
    +*) live="$live\${line#+} " ;;
    -*) id=\${line#-}; case $live in *" $id "*) live="\${live%% $id *} \${live#* $id }" ;; esac ;;
  esac
done
for id in $live; do kill -s KILL -- "-$id" 2>/dev/null; done`;

/** The program and arguments that run `/bin/sh -c <script> <name>`, possibly through the helper. */
export type ReaperLaunch = (shArgs: string[]) => { file: string; args: string[] };

export class HostReaper {
  private child: ChildProcess | undefined;
  private readonly live = new Set<number>();

  constructor(private readonly launch: ReaperLaunch) {}

  register(pgid: number): void {
    this.live.add(pgid);
    this.send(`+${pgid}\n`);
  }

  unregister(pgid: number): void {
    // Without a reaper running there is nobody to tell: a new one learns the list as it is then.
    if (this.live.delete(pgid) && this.child) this.send(`-${pgid}\n`);
  }

  /** The reaper's pid, once it runs (for tests and diagnostics). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /**
   * Ends the reaper: its stdin closes, it kills the groups still listed (none once every child was
   * reaped) and exits. Resolves once it has exited; a later spawn starts a new one.
   */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = undefined;
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // The reaper is unref'd so it never keeps the host alive; a caller awaiting close must be kept
    // alive until it has exited, or a host with nothing else to do ends with the await unsettled.
    child.ref();
    child.stdin?.end();
    await exited;
  }

  private send(line: string): void {
    // A fresh reaper is told the whole current list, which already includes this change.
    if (this.child) this.child.stdin?.write(line);
    else this.start();
  }

  private start(): ChildProcess {
    const { file, args } = this.launch(['-c', SCRIPT, HOST_REAPER_NAME]);
    const child = spawn(file, args, { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    this.child = child;
    // The reaper must never keep the host alive, and must not crash it if it goes away.
    child.unref();
    const stdin = child.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null;
    stdin?.unref?.();
    const forget = () => {
      if (this.child === child) this.child = undefined;
    };
    child.on('error', forget);
    child.on('exit', forget);
    child.stdin?.on('error', forget);
    // A new reaper must know the groups the old one was guarding.
    if (this.live.size > 0) child.stdin?.write([...this.live].map((pgid) => `+${pgid}\n`).join(''));
    return child;
  }
}
