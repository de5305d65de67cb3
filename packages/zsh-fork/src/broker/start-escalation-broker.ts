import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { constants } from 'node:os';
import { join } from 'node:path';
import {
  ESCALATION_BROKER_SPECIFICATION_VERSION,
  type EscalationBroker,
  type EscalationEnv,
  type EscalationSession,
  SpawnFailedError,
} from '@ux/protocol/core';
import { ESCALATION_FD } from '@ux/spawn';
import { type BrokerEvent, type BrokerOp, parseBrokerEvent } from './broker-wire.js';
import type { EscalateAction, ExecAction, ExecHandler, InterceptedExec } from './exec-handler.js';
import { checkedNativePath, defaultBrokerPath, defaultWrapperPath } from './native-binary-path.js';

export interface StartEscalationBrokerOptions {
  /**
   * A directory private to this host (the session's runtime dir). The broker's socket goes in a new
   * 0700 directory inside it, removed by `close()`. Its path must stay short: a Unix socket path has
   * at most 107 bytes.
   */
  runtimeDir: string;
  /** The `ux-escalate-broker` binary; defaults to the one built with this package. */
  brokerPath?: string;
  /** The `ux-execve-wrapper` binary given to commands as `EXEC_WRAPPER`; defaults to the built one. */
  wrapperPath?: string;
  /** Told about what the broker refused or could not read (bad tokens, malformed frames). */
  onDiagnostic?(message: string): void;
}

// `EscalationBroker`, `EscalationSession` and `EscalationEnv` are the contract's (`@ux/protocol`);
// re-exported for callers of this package.
export type { EscalationBroker, EscalationEnv, EscalationSession };

interface SessionState {
  id: string;
  handler: ExecHandler;
  requests: Set<number>;
  cachedRuns: number;
  closed: Promise<void>;
  markClosed(): void;
}

interface RequestState {
  session: SessionState;
  controller: AbortController;
  action?: EscalateAction;
  /** `action.onSettled` was called. */
  settled?: boolean;
}

const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, number]) => [number, name as NodeJS.Signals]),
);
const CLOSE_TIMEOUT_MS = 3_000;
const MAX_SOCKET_PATH = 107;

/**
 * Starts the escalation broker sidecar: a native process outside any sandbox that receives each
 * intercepted exec from ZshFork commands and asks the handler of the command's session what to do.
 */
export async function startEscalationBroker(
  options: StartEscalationBrokerOptions,
): Promise<EscalationBroker> {
  const brokerPath = checkedNativePath(options.brokerPath ?? defaultBrokerPath(), 'ux-escalate-broker');
  const wrapperPath = checkedNativePath(options.wrapperPath ?? defaultWrapperPath(), 'ux-execve-wrapper');
  mkdirSync(options.runtimeDir, { recursive: true, mode: 0o700 });
  const dir = mkdtempSync(join(options.runtimeDir, 'esc-'));
  chmodSync(dir, 0o700);
  const socketPath = join(dir, 'broker.sock');
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    rmSync(dir, { recursive: true, force: true });
    throw new SpawnFailedError({
      command: [brokerPath, socketPath],
      path: brokerPath,
      reason: `the broker's socket path is longer than ${MAX_SOCKET_PATH} bytes; use a shorter runtime directory`,
    });
  }

  const child = spawn(brokerPath, [socketPath], {
    stdio: ['pipe', 'pipe', 'pipe'],
    // Its own session: a Ctrl-C at the terminal of a CLI host must not reach the broker.
    detached: true,
  });
  const stderrTail: string[] = [];
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    stderrTail.push(text);
    if (stderrTail.length > 20) stderrTail.shift();
  });
  const exited = new Promise<void>((resolve) =>
    child.once('close', (code, signal) => {
      if (!broker.stopping)
        options.onDiagnostic?.(
          `the broker exited unexpectedly (${signal ?? `exit ${code}`}): ${stderrTail.join('').trim() || 'no message'}`,
        );
      resolve();
    }),
  );
  const broker = new Broker(child, exited, dir, socketPath, wrapperPath, options.onDiagnostic);
  const failure = new Promise<never>((_, reject) => {
    const fail = (reason: string, cause?: unknown) =>
      reject(
        new SpawnFailedError({ command: [brokerPath, socketPath], path: brokerPath, reason }, { cause }),
      );
    child.once('error', (error) => fail(error.message, error));
    void exited.then(() =>
      fail(`the broker exited before it was ready: ${stderrTail.join('').trim() || 'no message'}`),
    );
  });
  try {
    await Promise.race([broker.ready, failure]);
  } catch (error) {
    child.kill('SIGKILL');
    await exited;
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  failure.catch(() => {});
  return broker;
}

class Broker implements EscalationBroker {
  readonly specificationVersion = ESCALATION_BROKER_SPECIFICATION_VERSION;
  readonly id = 'zsh-fork';
  readonly pid: number;
  private readonly sessions = new Map<string, SessionState>();
  private readonly requests = new Map<number, RequestState>();
  private readonly opening = new Map<string, { resolve(): void; reject(error: Error): void }>();
  private sessionCounter = 0;
  /** Bumped by `invalidateCaches()`: a decision made across a bump is not cached. */
  private generation = 0;
  private gone = false;
  private closing: Promise<void> | undefined;
  private markReady!: () => void;
  /** Resolves when the broker listens. */
  readonly ready = new Promise<void>((resolve) => {
    this.markReady = resolve;
  });

  constructor(
    private readonly child: ChildProcessWithoutNullStreams,
    private readonly exited: Promise<void>,
    private readonly dir: string,
    readonly socketPath: string,
    readonly wrapperPath: string,
    private readonly onDiagnostic: ((message: string) => void) | undefined,
  ) {
    this.pid = child.pid!;
    let buffered = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text: string) => {
      buffered += text;
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        const event = parseBrokerEvent(line);
        if (event) this.onEvent(event);
        else if (line.trim()) this.onDiagnostic?.(`unreadable line from the broker: ${line}`);
        newline = buffered.indexOf('\n');
      }
    });
    // Writes after the broker died fail with EPIPE; its exit is handled below.
    child.stdin.on('error', () => {});
    void exited.then(() => this.onGone());
  }

  async openSession(handler: ExecHandler): Promise<EscalationSession> {
    if (this.gone || this.closing) {
      throw new SpawnFailedError({
        command: [this.wrapperPath],
        reason: 'the escalation broker has stopped; ZshFork commands cannot start',
      });
    }
    const id = `s${++this.sessionCounter}-${randomBytes(4).toString('hex')}`;
    const token = randomBytes(16).toString('hex');
    let markClosed!: () => void;
    const closed = new Promise<void>((resolve) => {
      markClosed = resolve;
    });
    const state: SessionState = { id, handler, requests: new Set(), cachedRuns: 0, closed, markClosed };
    const opened = new Promise<void>((resolve, reject) => this.opening.set(id, { resolve, reject }));
    this.sessions.set(id, state);
    this.send({ op: 'open', session: id, token });
    await opened;
    let closing: Promise<void> | undefined;
    return {
      id,
      token,
      spawnEscalation: { socketPath: this.socketPath, token, fd: ESCALATION_FD },
      env: { EXEC_WRAPPER: this.wrapperPath, UX_ESCALATE_SOCKET: String(ESCALATION_FD) },
      get cachedRuns() {
        return state.cachedRuns;
      },
      close: () => {
        closing ??= this.closeSession(state);
        return closing;
      },
    };
  }

  invalidateCaches(): void {
    this.generation += 1;
    this.send({ op: 'flush' });
  }

  /** Whether `close()` was called: the sidecar's exit is then expected. */
  get stopping(): boolean {
    return this.closing !== undefined;
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.child.stdin.end();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), CLOSE_TIMEOUT_MS);
      await this.exited;
      clearTimeout(timer);
      rmSync(this.dir, { recursive: true, force: true });
    })();
    return this.closing;
  }

  private async closeSession(state: SessionState): Promise<void> {
    if (!this.gone) this.send({ op: 'close', session: state.id });
    for (const request of state.requests) this.requests.get(request)?.controller.abort();
    await state.closed;
    // The broker answered for every request of the session before `closed`; any left never started.
    for (const request of state.requests) {
      const left = this.finish(request);
      if (left) settle(left);
    }
  }

  private send(op: BrokerOp): void {
    if (this.gone) return;
    this.child.stdin.write(`${JSON.stringify(op)}\n`);
  }

  private onEvent(event: BrokerEvent): void {
    switch (event.type) {
      case 'ready':
        this.markReady();
        return;
      case 'opened':
        this.opening.get(event.session)?.resolve();
        this.opening.delete(event.session);
        return;
      case 'exec':
        void this.decide(event);
        return;
      case 'cancelled': {
        const request = this.finish(event.request);
        request?.controller.abort();
        if (request) settle(request);
        return;
      }
      case 'started': {
        const request = this.requests.get(event.request);
        if (!request) return;
        settle(request);
        request.action?.onStart?.(event.pid);
        return;
      }
      case 'exited': {
        const request = this.finish(event.request);
        if (!request) return;
        settle(request);
        const signal = event.signal === null ? null : (SIGNAL_NAMES.get(event.signal) ?? null);
        if (event.cwdChanged) request.action?.onCwdChanged?.();
        request.action?.onExit?.(event.code, signal);
        return;
      }
      case 'closed': {
        const state = this.sessions.get(event.session);
        this.sessions.delete(event.session);
        if (state && typeof event.cachedRuns === 'number') state.cachedRuns = event.cachedRuns;
        state?.markClosed();
        return;
      }
      case 'refused':
        this.onDiagnostic?.(`the broker refused a connection: ${event.reason}`);
        return;
      case 'error':
        this.onDiagnostic?.(`broker: ${event.message}`);
        // An `open` the broker rejected would otherwise wait forever.
        for (const [id, opening] of this.opening) {
          if (event.message.includes(id)) {
            opening.reject(new SpawnFailedError({ command: [this.wrapperPath], reason: event.message }));
            this.opening.delete(id);
            this.sessions.delete(id);
          }
        }
        return;
      default:
        return;
    }
  }

  private finish(request: number): RequestState | undefined {
    const state = this.requests.get(request);
    if (!state) return undefined;
    this.requests.delete(request);
    state.session.requests.delete(request);
    return state;
  }

  private async decide(event: Extract<BrokerEvent, { type: 'exec' }>): Promise<void> {
    const session = this.sessions.get(event.session);
    if (!session) {
      this.send({ op: 'reply', request: event.request, action: 'deny', reason: 'its session is closed' });
      return;
    }
    const controller = new AbortController();
    const state: RequestState = { session, controller };
    // Read before the handler starts (in the same turn as whatever it reads first): an invalidation
    // between here and the reply makes the answer uncacheable.
    const generation = this.generation;
    this.requests.set(event.request, state);
    session.requests.add(event.request);
    const exec: InterceptedExec = {
      file: event.file,
      argv: event.argv,
      workdir: event.workdir,
      env: event.env,
    };
    let action: ExecAction;
    try {
      action = await session.handler(exec, {
        sessionId: session.id,
        request: event.request,
        signal: controller.signal,
      });
    } catch (error) {
      action = {
        action: 'deny',
        reason: `the exec could not be decided: ${(error as Error)?.message ?? error}`,
      };
    }
    if (controller.signal.aborted || !this.requests.has(event.request)) {
      settleUnsent(action);
      return;
    }
    const problem = invalidAction(action);
    if (problem) {
      settleUnsent(action);
      action = { action: 'deny', reason: `the exec could not be decided: ${problem}` };
    }
    if (action.action === 'escalate') {
      state.action = action;
      const identity = action.cwdIdentity;
      this.send({
        op: 'reply',
        request: event.request,
        action: 'escalate',
        argv: action.argv,
        cwd: action.cwd,
        env: action.env,
        ...(identity
          ? {
              cwdIdentity: {
                dev: identity.dev,
                ino: identity.ino,
                ancestors: identity.ancestors.map(({ dev, ino }) => ({ dev, ino })),
              },
            }
          : {}),
      });
      return;
    }
    this.finish(event.request);
    if (action.action === 'run')
      this.send({
        op: 'reply',
        request: event.request,
        action: 'run',
        ...(action.cache === true && generation === this.generation ? { cache: true as const } : {}),
      });
    else this.send({ op: 'reply', request: event.request, action: 'deny', reason: action.reason });
  }

  private onGone(): void {
    this.gone = true;
    for (const opening of this.opening.values()) {
      opening.reject(
        new SpawnFailedError({ command: [this.wrapperPath], reason: 'the escalation broker stopped' }),
      );
    }
    this.opening.clear();
    for (const request of this.requests.values()) {
      request.controller.abort();
      settle(request);
    }
    this.requests.clear();
    for (const session of this.sessions.values()) session.markClosed();
    this.sessions.clear();
    if (!this.closing) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Calls the escalation's `onSettled` once (a throwing callback is the caller's bug, not the broker's). */
function settle(request: RequestState): void {
  if (request.settled) return;
  request.settled = true;
  try {
    request.action?.onSettled?.();
  } catch {}
}

/** An answer that will never reach the broker: what it holds is released. */
function settleUnsent(action: unknown): void {
  if (typeof action !== 'object' || action === null) return;
  const { onSettled } = action as Partial<EscalateAction>;
  try {
    if (typeof onSettled === 'function') onSettled.call(action);
  } catch {}
}

/** Why `action` is not something the broker can carry out, or undefined when it is. */
function invalidAction(action: unknown): string | undefined {
  if (typeof action !== 'object' || action === null) return 'the handler gave no action';
  const candidate = action as Partial<ExecAction> & Record<string, unknown>;
  switch (candidate.action) {
    case 'run':
      return undefined;
    case 'deny':
      return typeof candidate.reason === 'string' ? undefined : 'a deny without a reason';
    case 'escalate': {
      const { argv, cwd, env } = candidate as Partial<EscalateAction>;
      if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string'))
        return 'an escalation needs a non-empty argv of strings';
      if (!argv[0]!.startsWith('/')) return 'an escalation must name its program by absolute path';
      if (typeof cwd !== 'string' || !cwd.startsWith('/')) return 'an escalation needs an absolute cwd';
      if (
        typeof env !== 'object' ||
        env === null ||
        !Object.entries(env).every(
          ([name, value]) => name !== '' && !name.includes('=') && typeof value === 'string',
        )
      )
        return 'an escalation needs an env of strings';
      if ([...argv, cwd, ...Object.entries(env).flat()].some((text) => text.includes('\0')))
        return 'an escalation must not contain NUL bytes';
      const { cwdIdentity } = candidate as Partial<EscalateAction>;
      if (cwdIdentity !== undefined) {
        const decimal = (value: unknown) => typeof value === 'string' && /^[0-9]{1,20}$/.test(value);
        const valid = (id: unknown) =>
          typeof id === 'object' &&
          id !== null &&
          decimal((id as { dev?: unknown }).dev) &&
          decimal((id as { ino?: unknown }).ino);
        if (
          !valid(cwdIdentity) ||
          !Array.isArray(cwdIdentity.ancestors) ||
          !cwdIdentity.ancestors.every(valid)
        )
          return "an escalation's cwdIdentity needs decimal dev and ino strings, and ancestors";
      }
      return undefined;
    }
    default:
      return `an unknown action ${JSON.stringify(candidate.action)}`;
  }
}
