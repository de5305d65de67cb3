import { lstatSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { LineSplitter } from '@ux/protocol-utils';
import { ControlError } from './control-error.js';
import { checkOwnDirectory, controlDirectory, controlSocketPath } from './control-paths.js';
import { CONTROL_MAX_LINE_BYTES, encodeControlMessage, parseControlServerLine } from './control-wire.js';
import type { ControlHello } from './start-control-server.js';

export interface ControlClient {
  /** What the process said of itself when connected. */
  readonly hello: ControlHello;
  /** Calls a method; rejects with a `ControlError` (the server's code, or `unavailable` when it went). */
  call(method: string, params?: Record<string, unknown>): Promise<unknown>;
  /** Listens to an event the server sends (after a `….watch` or `….attach` call). */
  on(event: string, listener: (params: unknown) => void): () => void;
  /** Runs once when the connection ends (the process exited, or `close`). */
  onClose(listener: () => void): void;
  close(): void;
}

export interface ConnectControlOptions {
  runtimeRoot?: string;
  /** Default 2000 ms: a process that does not answer `hello` by then is not a ux. */
  timeoutMs?: number;
}

/**
 * Connects to the control socket of ux process `pid` and says `hello`. Only a socket of this user in
 * ux's own control directory is reached; anything else is a `ControlError('unavailable')` naming why.
 */
export async function connectControl(
  pid: number,
  options: ConnectControlOptions = {},
): Promise<ControlClient> {
  const dir = controlDirectory(options.runtimeRoot);
  checkOwnDirectory(dir);
  const path = controlSocketPath(pid, options.runtimeRoot);
  const stat = (() => {
    try {
      return lstatSync(path);
    } catch {
      return undefined;
    }
  })();
  if (!stat?.isSocket()) throw new ControlError('not_found', `no ux process ${pid} serves a control socket`);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    throw new ControlError('unavailable', `${path} belongs to uid ${stat.uid}; not connecting`);

  const socket = await new Promise<Socket>((resolve, reject) => {
    const socket = connect(path);
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', (error) =>
      reject(
        new ControlError('not_found', `ux process ${pid} does not answer: ${error.message}`, {
          cause: error,
        }),
      ),
    );
  });
  const client = new Client(socket);
  try {
    const hello = (await withTimeout(client.call('hello'), options.timeoutMs ?? 2000, pid)) as ControlHello;
    if (typeof hello !== 'object' || hello === null || hello.pid !== pid)
      throw new ControlError('unavailable', `process ${pid}'s socket answered as someone else`);
    client.hello = hello;
    return client;
  } catch (error) {
    client.close();
    throw error;
  }
}

class Client implements ControlClient {
  hello!: ControlHello;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  private readonly listeners = new Map<string, Set<(params: unknown) => void>>();
  private readonly closeListeners: (() => void)[] = [];
  private ended = false;

  constructor(private readonly socket: Socket) {
    const lines = new LineSplitter(
      CONTROL_MAX_LINE_BYTES,
      (line) => this.receive(line),
      () => this.fail(new ControlError('bad_request', 'the server sent a line that is too long')),
    );
    socket.on('data', (data) => lines.push(data));
    socket.on('error', () => undefined);
    socket.on('close', () =>
      this.fail(new ControlError('unavailable', 'the ux process closed its control socket')),
    );
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<unknown> {
    if (this.ended)
      return Promise.reject(new ControlError('unavailable', 'the control connection is closed'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.socket.write(encodeControlMessage({ v: 1, id, method, params }));
    });
  }

  on(event: string, listener: (params: unknown) => void): () => void {
    const set = this.listeners.get(event) ?? new Set<(params: unknown) => void>();
    this.listeners.set(event, set);
    set.add(listener);
    return () => set.delete(listener);
  }

  onClose(listener: () => void): void {
    if (this.ended) listener();
    else this.closeListeners.push(listener);
  }

  close(): void {
    this.socket.destroy();
    this.fail(new ControlError('unavailable', 'the control connection is closed'));
  }

  private receive(line: string): void {
    let message: ReturnType<typeof parseControlServerLine>;
    try {
      message = parseControlServerLine(line);
    } catch (error) {
      this.fail(error as Error);
      this.socket.destroy();
      return;
    }
    if ('event' in message) {
      for (const listener of this.listeners.get(message.event) ?? []) listener(message.params);
      return;
    }
    const waiter = this.pending.get(message.id);
    if (!waiter) return;
    this.pending.delete(message.id);
    if ('error' in message) waiter.reject(new ControlError(message.error.code, message.error.message));
    else waiter.resolve(message.result);
  }

  private fail(error: Error): void {
    if (this.ended) return;
    this.ended = true;
    for (const waiter of this.pending.values()) waiter.reject(error);
    this.pending.clear();
    for (const listener of this.closeListeners.splice(0)) listener();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, pid: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new ControlError('unavailable', `ux process ${pid} did not answer within ${ms} ms`)),
      ms,
    );
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
