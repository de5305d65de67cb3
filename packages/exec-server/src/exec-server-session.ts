import { randomUUID } from 'node:crypto';
import type { ExecParams, StartResult } from '@ux/protocol';
import { EXITED_PROCESS_RETENTION_MS } from './exec-server-constants.js';
import { HostedProcess, type Notify } from './hosted-process.js';
import { internalError, invalidRequest } from './rpc-error.js';
import { type StartDependencies, startProcess } from './start-process.js';

const STARTING = Symbol('starting');

/**
 * The processes one client works with. A session outlives its connection when the server keeps
 * processes on disconnect; a later connection can resume it with `initialize.resumeSessionId`.
 */
export class ExecServerSession {
  readonly id = randomUUID();
  private readonly processes = new Map<string, HostedProcess | typeof STARTING>();
  private readonly removals = new Set<NodeJS.Timeout>();
  private readonly starts = new Set<Promise<unknown>>();
  private notifySink: Notify | undefined;
  private closing = false;
  private outputPaused = false;

  constructor(
    private readonly deps: StartDependencies,
    private readonly retentionMs = EXITED_PROCESS_RETENTION_MS,
  ) {}

  get attached(): boolean {
    return this.notifySink !== undefined;
  }

  /** Routes this session's notifications to a connection (or drops them while detached). */
  attach(notify: Notify | undefined): void {
    this.notifySink = notify;
    // Nobody to wait for while detached: output goes to the retained buffer only.
    if (!notify) this.setOutputPaused(false);
  }

  private readonly notify: Notify = (message, droppable) => {
    this.notifySink?.(message, droppable);
  };

  async start(params: ExecParams): Promise<StartResult> {
    const { processId } = params;
    if (this.closing) throw internalError('the exec-server is shutting down; the command was not run');
    if (this.processes.has(processId)) throw invalidRequest(`process ${processId} already exists`);
    this.processes.set(processId, STARTING);
    let started: Awaited<ReturnType<typeof startProcess>>;
    const pending = startProcess(this.deps, params);
    this.starts.add(pending);
    try {
      started = await pending;
    } catch (error) {
      this.processes.delete(processId);
      throw error;
    } finally {
      this.starts.delete(pending);
    }
    if (this.closing) {
      // Shutdown began while it was starting: it must not outlive the server.
      this.processes.delete(processId);
      await started.process.terminate();
      await started.settled;
      throw internalError('the exec-server is shutting down; the command was stopped');
    }
    const hosted = new HostedProcess({
      processId,
      argv: params.argv,
      cwd: params.cwd,
      sandboxType: started.sandboxType,
      process: started.process,
      tty: params.tty,
      stdinOpen: params.tty || params.pipeStdin === true,
      ...(started.sandbox ? { sandbox: started.sandbox } : {}),
      settled: started.settled,
      notify: this.notify,
      onClosed: () => this.scheduleRemoval(processId, hosted),
    });
    this.processes.set(processId, hosted);
    if (this.outputPaused) hosted.pauseOutput();
    return { processId, sandboxType: started.sandboxType };
  }

  /** Back-pressure from the connection: stop or restart reading every process's output. */
  setOutputPaused(paused: boolean): void {
    if (paused === this.outputPaused) return;
    this.outputPaused = paused;
    for (const entry of this.processes.values()) {
      if (entry === STARTING) continue;
      if (paused) entry.pauseOutput();
      else entry.resumeOutput();
    }
  }

  /** A closed process stays readable for a while, then its id is forgotten (and free again). */
  private scheduleRemoval(processId: string, hosted: HostedProcess): void {
    const timer = setTimeout(() => {
      this.removals.delete(timer);
      if (this.processes.get(processId) === hosted) this.processes.delete(processId);
    }, this.retentionMs);
    timer.unref();
    this.removals.add(timer);
  }

  /** The process, `starting` while its start is in flight, or undefined. */
  lookup(processId: string): HostedProcess | 'starting' | undefined {
    const entry = this.processes.get(processId);
    return entry === STARTING ? 'starting' : entry;
  }

  /** Like `lookup`, but an unknown or starting id is the -32600 error Codex gives. */
  require(processId: string): HostedProcess {
    const entry = this.lookup(processId);
    if (entry === undefined) throw invalidRequest(`unknown process id ${processId}`);
    if (entry === 'starting') throw invalidRequest(`process id ${processId} is starting`);
    return entry;
  }

  /** The processes it hosts (started ones), oldest first. */
  hosted(): HostedProcess[] {
    return [...this.processes.values()].filter((entry): entry is HostedProcess => entry !== STARTING);
  }

  /** Nothing is starting or running (closed processes may still be readable). */
  idle(): boolean {
    for (const entry of this.processes.values()) if (entry === STARTING || !entry.closed) return false;
    return true;
  }

  /** Kills every process and waits (up to `graceMs`) for their output to close. */
  async shutdown(graceMs: number): Promise<void> {
    this.closing = true;
    await Promise.allSettled([...this.starts]);
    const live = [...this.processes.values()].filter((entry): entry is HostedProcess => entry !== STARTING);
    for (const entry of live) entry.wake();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled(live.map((entry) => entry.kill())),
      new Promise((resolve) => {
        timer = setTimeout(resolve, graceMs);
      }),
    ]);
    clearTimeout(timer);
    for (const removal of this.removals) clearTimeout(removal);
    this.removals.clear();
  }
}
