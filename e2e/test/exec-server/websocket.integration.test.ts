// `--listen ws://…`: capability tokens, several connections, and what happens to a client's processes
// when it disconnects (kept and resumable by default, or terminated).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, waitUntilDead } from '@ux/protocol-testing';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import WebSocket from 'ws';
import { type Message, PATH, startWebSocketServer, uri } from './test-support.js';

useLeakCheck(5_000);

/** A raw WebSocket client that records every message. */
async function connect(url: string, token: string) {
  const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
  const messages: Message[] = [];
  const waiters: (() => void)[] = [];
  socket.on('message', (data) => {
    messages.push(JSON.parse(data.toString()) as Message);
    for (const wake of waiters.splice(0)) wake();
  });
  await new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  let nextId = 1;
  const waitFor = async (match: (m: Message) => boolean) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const found = messages.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`timed out; got ${JSON.stringify(messages)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  const client = {
    socket,
    messages,
    waitFor,
    request(method: string, params?: unknown) {
      const id = nextId++;
      socket.send(JSON.stringify({ id, method, params }));
      return waitFor((m) => m.id === id);
    },
    async handshake(resumeSessionId?: string) {
      const answer = await client.request('initialize', {
        clientName: 'ws-test',
        resumeSessionId: resumeSessionId ?? null,
      });
      socket.send(JSON.stringify({ method: 'initialized' }));
      return answer;
    },
    async close() {
      if (socket.readyState === WebSocket.CLOSED) return;
      await new Promise((resolve) => {
        socket.once('close', resolve);
        socket.close();
      });
    },
  };
  return client;
}

async function server(extra: string[] = []) {
  const dir = tempDir('ux-es-ws-');
  writeFileSync(join(dir, 'token'), 'sesame\n');
  const running = await startWebSocketServer(join(dir, 'token'), extra);
  onTestFinished(async () => {
    await running.stop();
  });
  return { ...running, dir };
}

async function startSleeper(client: Awaited<ReturnType<typeof connect>>, dir: string, processId: string) {
  const pidFile = join(dir, `${processId}.pid`);
  await client.request('process/start', {
    processId,
    argv: ['sh', '-c', `echo $$ > ${pidFile}; echo hello-${processId}; exec sleep 300`],
    cwd: uri(dir),
    env: { PATH },
    tty: false,
  });
  await client.waitFor((m) => m.method === 'process/output' && m.params?.processId === processId);
  return Number(readFileSync(pidFile, 'utf8'));
}

describe('WebSocket listener', () => {
  it('prints the bound loopback URL and serves several connections at once', async () => {
    const { url } = await server();
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const [a, b] = await Promise.all([connect(url, 'sesame'), connect(url, 'sesame')]);
    onTestFinished(async () => {
      await a.close();
      await b.close();
    });
    const [sa, sb] = await Promise.all([a.handshake(), b.handshake()]);
    expect(sa.result!.sessionId).not.toBe(sb.result!.sessionId);
    expect((await a.request('environment/status')).result).toEqual({ status: 'ready' });
    expect((await b.request('environment/status')).result).toEqual({ status: 'ready' });
  });

  it('keeps a client’s processes after it disconnects; a new connection resumes the session', async () => {
    const { url, dir } = await server();
    const first = await connect(url, 'sesame');
    const sessionId = String((await first.handshake()).result!.sessionId);
    const pid = await startSleeper(first, dir, 'keep');
    await first.close();

    // Resumed once the server has taken the disconnect (until then the session is still attached, and
    // a resume is refused with -32010): polled with new connections instead of a pause.
    let second = await connect(url, 'sesame');
    let resumed = await second.handshake(sessionId);
    const deadline = Date.now() + 15_000;
    while (resumed.error?.code === -32010 && Date.now() < deadline) {
      await second.close();
      second = await connect(url, 'sesame');
      resumed = await second.handshake(sessionId);
    }
    const resumedClient = second;
    onTestFinished(() => resumedClient.close());
    expect(resumed.result?.sessionId, JSON.stringify(resumed)).toBe(sessionId);
    // Kept across the disconnect.
    expect(isAlive(pid)).toBe(true);
    const read = (await second.request('process/read', { processId: 'keep' })).result!;
    expect(Buffer.from((read.chunks as { chunk: string }[])[0]!.chunk, 'base64').toString()).toBe(
      'hello-keep\n',
    );
    const third = await connect(url, 'sesame');
    onTestFinished(() => third.close());
    expect((await third.handshake(sessionId)).error).toEqual({
      code: -32010,
      message: `session ${sessionId} is attached to another connection`,
    });
    const stranger = await connect(url, 'sesame');
    onTestFinished(() => stranger.close());
    expect((await stranger.handshake('no-such-session')).error).toEqual({
      code: -32600,
      message: 'unknown session id no-such-session',
    });
    expect((await second.request('process/terminate', { processId: 'keep' })).result).toEqual({
      running: true,
    });
    expect(await waitUntilDead(pid)).toBe(true);
  });

  it('kills a kept session’s processes when the server stops', async () => {
    const running = await server();
    const client = await connect(running.url, 'sesame');
    await client.handshake();
    const pid = await startSleeper(client, running.dir, 'orphan');
    await client.close();
    expect(await running.stop()).toEqual({ code: 0, signal: null });
    expect(await waitUntilDead(pid)).toBe(true);
  });

  it('with --on-disconnect terminate, kills them when the connection ends', async () => {
    const { url, dir } = await server(['--on-disconnect', 'terminate']);
    const client = await connect(url, 'sesame');
    await client.handshake();
    const pid = await startSleeper(client, dir, 'gone');
    await client.close();
    expect(await waitUntilDead(pid)).toBe(true);
  });

  it('answers a binary frame with an error and keeps the connection', async () => {
    const { url } = await server();
    const client = await connect(url, 'sesame');
    onTestFinished(() => client.close());
    await client.handshake();
    client.socket.send(Buffer.from('{"id":5,"method":"environment/status"}'), { binary: true });
    expect((await client.waitFor((m) => m.id === -1)).error).toEqual({
      code: -32600,
      message:
        'failed to parse JSON-RPC message: binary frames are not supported; send each message as a text frame',
    });
    expect((await client.request('environment/status')).result).toEqual({ status: 'ready' });
  });

  it('refuses upgrades without the token with HTTP 401, and plain HTTP with 426', async () => {
    const { url } = await server();
    await expect(connect(url, 'nope')).rejects.toThrow('Unexpected server response: 401');
    const response = await fetch(url.replace('ws:', 'http:'));
    expect(response.status).toBe(426);
    await response.text();
  });
});
