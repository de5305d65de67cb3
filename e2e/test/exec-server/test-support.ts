// The exec-server as a real child process (the e2e test server), spoken to line by line.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import type { WireFileSystemEntry } from '@ux/protocol';
import { codexWorkspaceWriteContext } from '@ux/protocol-testing';
import { LineSplitter } from '@ux/protocol-utils';

import { SERVER_BIN } from '../support/exec-server-bin.js';

export { SERVER_BIN };

export type Message = Record<string, unknown> & {
  id?: number | string;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

/** A raw line client over the server's stdio: sends anything, records everything. */
export class WireSession {
  readonly messages: Message[] = [];
  readonly stderr: string[] = [];
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private nextId = 1;
  private waiters: (() => void)[] = [];

  private constructor(readonly child: ChildProcessWithoutNullStreams) {
    const splitter = new LineSplitter(
      256 * 1024 * 1024,
      (line) => {
        this.messages.push(JSON.parse(line) as Message);
        for (const wake of this.waiters.splice(0)) wake();
      },
      () => {},
    );
    child.stdout.on('data', (data: Buffer) => splitter.push(data));
    child.stderr.setEncoding('utf8').on('data', (text: string) => this.stderr.push(text));
    child.stdin.on('error', () => {});
    this.exited = new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  }

  static start(args: string[] = ['--listen', 'stdio'], env: NodeJS.ProcessEnv = process.env): WireSession {
    return new WireSession(spawn(process.execPath, [SERVER_BIN, ...args], { stdio: 'pipe', env }));
  }

  /** Starts a server and completes the handshake. */
  static async ready(args?: string[]): Promise<WireSession> {
    const session = WireSession.start(args);
    await session.request('initialize', { clientName: 'ux-test' });
    session.send({ method: 'initialized', params: {} });
    return session;
  }

  send(message: unknown): void {
    this.child.stdin.write(`${typeof message === 'string' ? message : JSON.stringify(message)}\n`);
  }

  /** Sends a request and waits for the response or error with its id. */
  async request(method: string, params?: unknown): Promise<Message> {
    const id = this.nextId++;
    this.send(params === undefined ? { id, method } : { id, method, params });
    return this.waitFor((message) => message.id === id && ('result' in message || 'error' in message));
  }

  async waitFor(match: (message: Message) => boolean, timeoutMs = 10_000): Promise<Message> {
    const deadline = Date.now() + timeoutMs;
    let checked = 0;
    for (;;) {
      // Only messages that arrived since the last look (a flood brings thousands).
      for (; checked < this.messages.length; checked++) {
        if (match(this.messages[checked]!)) return this.messages[checked]!;
      }
      const left = deadline - Date.now();
      if (left <= 0)
        throw new Error(`no matching message within ${timeoutMs} ms; got:\n${this.transcript()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The notifications of one process, in arrival order. */
  events(processId: string): Message[] {
    return this.messages.filter((message) => message.method && message.params?.processId === processId);
  }

  /** Waits for `process/closed` of a process and returns its events sorted by seq. */
  async finished(processId: string): Promise<Message[]> {
    await this.waitFor((m) => m.method === 'process/closed' && m.params?.processId === processId);
    return this.events(processId).sort((a, b) => Number(a.params!.seq) - Number(b.params!.seq));
  }

  /** The decoded output of a process's `process/output` notifications, in seq order. */
  output(processId: string): string {
    return Buffer.concat(
      this.events(processId)
        .filter((m) => m.method === 'process/output')
        .sort((a, b) => Number(a.params!.seq) - Number(b.params!.seq))
        .map((m) => Buffer.from(String(m.params!.chunk), 'base64')),
    ).toString('utf8');
  }

  transcript(): string {
    return this.messages.map((message) => JSON.stringify(message).slice(0, 300)).join('\n');
  }

  /** Closes stdin (the protocol's way to stop a stdio server) and waits for the exit. */
  async close(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin.end();
    return this.exited;
  }
}

/** `file://` URI of a local path. */
export const uri = (path: string) => `file://${path}`;

export const PATH = '/usr/local/bin:/usr/bin:/bin';

export const b64 = (text: string) => Buffer.from(text).toString('base64');

/** Starts the server on a free loopback port with a token file; resolves with its URL. */
export async function startWebSocketServer(tokenFile: string, extra: string[] = []) {
  const child = spawn(
    process.execPath,
    [SERVER_BIN, '--listen', 'ws://127.0.0.1:0', '--ws-token-file', tokenFile, ...extra],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const stderr: string[] = [];
  child.stderr.setEncoding('utf8').on('data', (text: string) => stderr.push(text));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => {
      seen += text;
      const line = /^(ws:\/\/\S+)\n/.exec(seen);
      if (line) resolve(line[1]!);
    });
    void exited.then(() => reject(new Error(`the server exited before listening: ${stderr.join('')}`)));
  });
  return {
    url,
    child,
    exited,
    stderr,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/**
 * The workspace-write context the Codex 0.169.0 client sends (docs/reference/exec-server-protocol.md §6),
 * for `workspace`.
 */
export function workspaceWriteContext(workspace: string, extra: object[] = []) {
  return codexWorkspaceWriteContext(uri(workspace), extra as WireFileSystemEntry[]);
}
