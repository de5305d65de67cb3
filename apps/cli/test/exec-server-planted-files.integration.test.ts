// Files a sandboxed command plants for `ux exec-server`'s own file methods: a FIFO
// and a link to /dev/zero where the client will read AGENTS.md. Through the built `ux exec-server`,
// over stdio and over WebSocket: each fs/readFile of them answers an error at once, a normal file is
// still read afterwards, and the server exits when its stdin ends. Controls show that a plain read of
// the FIFO waits for a writer and that /dev/zero reports size 0 while it never ends.
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { closeSync, lstatSync, openSync, readlinkSync, readSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectWebSocketExecServer } from '@ux/exec-server-client';
import { codexWorkspaceWriteContext } from '@ux/protocol-testing';
import { LineSplitter } from '@ux/protocol-utils';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { BIN, makeHome, type UxHome } from './cli-harness.js';

useLeakCheck();

type Message = {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
};

/** A raw JSON-RPC peer of `ux exec-server`: sends anything, records every message. */
class Peer {
  readonly messages: Message[] = [];
  private nextId = 1;
  private wakers: (() => void)[] = [];

  constructor(private readonly write: (text: string) => void) {}

  receive(text: string): void {
    this.messages.push(JSON.parse(text) as Message);
    for (const wake of this.wakers.splice(0)) wake();
  }

  send(message: object): void {
    this.write(JSON.stringify(message));
  }

  request(method: string, params: object): Promise<Message> {
    const id = this.nextId++;
    this.send({ id, method, params });
    return this.waitFor((message) => message.id === id && ('result' in message || 'error' in message));
  }

  async waitFor(match: (message: Message) => boolean, timeoutMs = 15_000): Promise<Message> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.messages.find(match);
      if (found) return found;
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no answer within ${timeoutMs} ms; got:\n${this.transcript()}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.wakers.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  transcript(): string {
    return this.messages.map((message) => JSON.stringify(message).slice(0, 300)).join('\n');
  }

  async handshake(): Promise<void> {
    const init = await this.request('initialize', { clientName: 'ux-planted-files-test' });
    expect(init.error).toBeUndefined();
    this.send({ method: 'initialized', params: {} });
  }
}

interface Served {
  peer: Peer;
  child: ChildProcessWithoutNullStreams;
  /** The server's exit, once its process closed. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts `ux exec-server ARGS` with piped stdio; killed (and awaited) when the test ends. */
function startServer(home: UxHome, args: string[]) {
  const child = spawn(process.execPath, [BIN, 'exec-server', ...args], { env: home.env, stdio: 'pipe' });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal })),
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  child.stdin.on('error', () => {});
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return { child, exited, stderr: () => stderr };
}

const transports: Record<string, (home: UxHome) => Promise<Served>> = {
  async stdio(home) {
    const { child, exited } = startServer(home, ['--listen', 'stdio']);
    const peer = new Peer((text) => child.stdin.write(`${text}\n`));
    const splitter = new LineSplitter(
      256 * 1024 * 1024,
      (line) => peer.receive(line),
      () => {},
    );
    child.stdout.on('data', (data: Buffer) => splitter.push(data));
    return { peer, child, exited };
  },
  async websocket(home) {
    const tokenFile = join(tempDir('ux-planted-token-'), 'token');
    writeFileSync(tokenFile, 'planted-files-token\n', { mode: 0o600 });
    // --exit-on-stdin-close: this server too must stop when its input ends.
    const { child, exited, stderr } = startServer(home, [
      '--listen',
      'ws://127.0.0.1:0',
      '--ws-token-file',
      tokenFile,
      '--exit-on-stdin-close',
    ]);
    const url = await new Promise<string>((resolve, reject) => {
      let seen = '';
      child.stdout.setEncoding('utf8').on('data', (text: string) => {
        seen += text;
        const line = /^(ws:\/\/\S+)\n/.exec(seen);
        if (line) resolve(line[1]!);
      });
      void exited.then(() => reject(new Error(`ux exec-server exited before listening: ${stderr()}`)));
    });
    // The client package's WebSocket transport, used as a raw text channel.
    const socket = await connectWebSocketExecServer({ url, token: 'planted-files-token' });
    const peer = new Peer((text) => socket.send(text));
    socket.onMessage((text) => peer.receive(text));
    onTestFinished(() => socket.close());
    return { peer, child, exited };
  },
};

const uri = (path: string) => `file://${path}`;

/** Runs a shell script in the server's bwrap sandbox (workspace-write), to its close. */
async function sandboxed(peer: Peer, workspace: string, processId: string, script: string) {
  const started = await peer.request('process/start', {
    processId,
    argv: ['/bin/sh', '-c', script],
    cwd: uri(workspace),
    env: { PATH: '/usr/bin:/bin' },
    tty: false,
    sandbox: codexWorkspaceWriteContext(uri(workspace)),
  });
  expect(started.result).toEqual({ processId, sandboxType: 'linuxSeccomp' });
  await peer.waitFor((m) => m.method === 'process/closed' && m.params?.processId === processId);
  const exited = peer.messages.find(
    (m) => m.method === 'process/exited' && m.params?.processId === processId,
  );
  return exited!.params!.exitCode;
}

/** A plain blocking reader of `path` (Node's readFileSync), outside any sandbox; says `ready` first. */
function plainReader(path: string) {
  const child = spawn(
    process.execPath,
    [
      '-e',
      `process.stdout.write('ready\\n');
       const data = require('fs').readFileSync(process.argv[1], 'utf8');
       process.stdout.write('got:' + data + '\\n');`,
      path,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (text: string) => {
    output += text;
  });
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  const ready = new Promise<void>((resolve) => {
    child.stdout.on('data', () => {
      if (output.includes('ready\n')) resolve();
    });
  });
  return { child, ready, exited, output: () => output };
}

describe.each(Object.keys(transports))(
  'ux exec-server over %s: files a sandboxed command planted',
  (name) => {
    it('answers fs/readFile of a FIFO and of a link to /dev/zero with an error at once, keeps serving, and exits when stdin ends', async () => {
      const home = makeHome();
      const { workspace } = home;
      const { peer, child, exited } = await transports[name]!(home);
      await peer.handshake();

      // The sandboxed command plants them where a client reads instructions.
      const planted = await sandboxed(
        peer,
        workspace,
        'plant',
        'mkfifo AGENTS.md && ln -s /dev/zero ZERO.md && printf "plain text\\n" > normal.md',
      );
      expect(planted).toBe(0);
      const fifo = join(workspace, 'AGENTS.md');
      const zero = join(workspace, 'ZERO.md');
      expect(lstatSync(fifo).isFIFO()).toBe(true);
      expect(readlinkSync(zero)).toBe('/dev/zero');

      // Control 1: a plain blocking read of the FIFO waits (finished below, once a writer comes).
      const reader = plainReader(fifo);
      await reader.ready;
      // Control 2: /dev/zero says it holds 0 bytes, and gives a mebibyte (and more) when read.
      expect(statSync(zero).size).toBe(0);
      const fd = openSync(zero, 'r');
      const mebibyte = Buffer.alloc(1 << 20, 1);
      expect(readSync(fd, mebibyte, 0, mebibyte.length, null)).toBe(mebibyte.length);
      closeSync(fd);
      expect(mebibyte.every((byte) => byte === 0)).toBe(true);

      // More reads of them at once than libuv has threads (4): none may hold one.
      const answers = await Promise.all([
        ...Array.from({ length: 6 }, () => peer.request('fs/readFile', { path: uri(fifo) })),
        ...Array.from({ length: 3 }, () => peer.request('fs/readFile', { path: uri(zero) })),
      ]);
      for (const answer of answers.slice(0, 6)) {
        expect(answer.error).toEqual({
          code: -32603,
          message: `fs/readFile: ${fifo} is a FIFO (named pipe), not a regular file; fs/readFile reads regular files only`,
        });
      }
      for (const answer of answers.slice(6)) {
        expect(answer.error).toEqual({
          code: -32603,
          message: `fs/readFile: ${zero} (a link to /dev/zero) is a character device, not a regular file; fs/readFile reads regular files only`,
        });
      }
      // Writes refuse them too, writing nothing: the FIFO's reader is still waiting.
      const written = await peer.request('fs/writeFile', { path: uri(fifo), dataBase64: 'ZXZpbA==' });
      expect(written.error?.message).toContain('is a FIFO (named pipe), not a regular file');
      const throughLink = await peer.request('fs/writeFile', { path: uri(zero), dataBase64: 'ZXZpbA==' });
      expect(throughLink.error?.message).toContain(
        'is a symbolic link; fs/writeFile does not write through a link',
      );
      // Metadata describes them without opening them.
      const meta = await peer.request('fs/getMetadata', { path: uri(fifo) });
      expect(meta.result).toMatchObject({ isFile: false, isDirectory: false, isSymlink: false, size: 0 });

      // The server still reads a normal file, and still runs commands.
      const normal = await peer.request('fs/readFile', { path: uri(join(workspace, 'normal.md')) });
      expect(Buffer.from(String(normal.result?.dataBase64), 'base64').toString('utf8')).toBe('plain text\n');
      expect(await sandboxed(peer, workspace, 'after', 'test -p AGENTS.md')).toBe(0);

      // Control 1, finished: the plain reader had been waiting in its read all along; a writer ends it.
      expect(reader.child.exitCode).toBeNull();
      const writer = spawn('/bin/sh', ['-c', 'printf unblocked > "$1"', 'sh', fifo], { stdio: 'ignore' });
      await new Promise((resolve) => writer.once('close', resolve));
      expect(await reader.exited).toBe(0);
      expect(reader.output()).toBe('ready\ngot:unblocked\n');

      // The end of its input ends the server, cleanly.
      child.stdin.end();
      expect(await exited).toEqual({ code: 0, signal: null });
    });
  },
);
