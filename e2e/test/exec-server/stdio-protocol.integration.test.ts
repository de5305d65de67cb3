// The wire protocol of `--listen stdio`, message by message, against the server as a real child
// process (exchanges T1–T6 of docs/reference/exec-server-protocol.md §8, with ux's documented differences).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isAlive, waitUntilDead } from '@ux/protocol-testing';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { describe, expect, it, onTestFinished } from 'vitest';
import { b64, PATH, uri, WireSession } from './test-support.js';

useLeakCheck(5_000);

async function ready() {
  const session = await WireSession.ready();
  onTestFinished(async () => {
    await session.close();
  });
  return session;
}

/** The pid written in `file`, once it is there. */
function pidIn(file: string): number | undefined {
  try {
    const text = readFileSync(file, 'utf8').trim();
    return text === '' ? undefined : Number(text);
  } catch {
    return undefined;
  }
}

/** The pids whose command line (NUL-separated) is `cmdline`. */
function pidsRunning(cmdline: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8') === cmdline) found.push(Number(name));
    } catch {
      // It ended while we looked.
    }
  }
  return found;
}

/** Polls `check` until it holds; throws when `timeoutMs` pass first. */
async function until(check: () => boolean, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * `pid` sleeps in a write nobody reads: to a full pipe (`pipe_write`) or socket
 * (`sock_alloc_send_pskb`), as Linux names the wait.
 */
function blockedInWrite(pid: number): boolean {
  try {
    return /pipe_write|sock_alloc_send|unix_stream_sendmsg|wait_for_space/.test(
      readFileSync(`/proc/${pid}/wchan`, 'utf8'),
    );
  } catch {
    return false;
  }
}

const start = (processId: string, argv: string[], extra: Record<string, unknown> = {}) => ({
  processId,
  argv,
  cwd: uri('/tmp'),
  env: { PATH },
  tty: false,
  arg0: null,
  ...extra,
});

describe('handshake', () => {
  it('gates every method on initialize, then on initialized (T1)', async () => {
    const session = WireSession.start();
    onTestFinished(async () => {
      await session.close();
    });
    const early = await session.request('process/start', start('p1', ['echo', 'hello']));
    expect(early.error).toEqual({
      code: -32600,
      message: 'client must call initialize before using exec methods',
    });
    const fsEarly = await session.request('fs/readFile', { path: uri('/etc/hostname') });
    expect(fsEarly.error?.message).toBe('client must call initialize before using filesystem methods');

    const init = await session.request('initialize', { clientName: 'example-client' });
    expect(init.result).toMatchObject({
      sessionId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      environmentInfo: {
        executorVersion: expect.any(String),
        platformOs: 'linux',
        capabilities: { uxProcessResize: true, uxSandboxedProcesses: true },
      },
    });
    expect(init).not.toHaveProperty('jsonrpc');
    const between = await session.request('process/start', start('p1', ['echo', 'hello']));
    expect(between.error).toEqual({
      code: -32600,
      message: 'client must send initialized before using exec methods',
    });
    const again = await session.request('initialize', { clientName: 'example-client' });
    expect(again.error).toEqual({ code: -32600, message: 'initialize may only be sent once per connection' });

    session.send({ method: 'initialized', params: {} });
    const started = await session.request('process/start', start('p1', ['echo', 'hello']));
    expect(started.result).toEqual({ processId: 'p1', sandboxType: 'none' });
  });

  it('requires clientName, and answers a premature initialized with an error instead of dropping', async () => {
    const session = WireSession.start();
    onTestFinished(async () => {
      await session.close();
    });
    session.send({ method: 'initialized' });
    const complaint = await session.waitFor((m) => m.id === -1);
    expect(complaint.error?.message).toContain('`initialized` received before `initialize`');
    expect((await session.request('initialize', {})).error).toEqual({
      code: -32602,
      message: 'missing field `clientName`',
    });
    expect((await session.request('initialize', { clientName: 'c' })).result).toHaveProperty('sessionId');
  });

  it('accepts the jsonrpc field and string ids, and echoes the id', async () => {
    const session = await ready();
    session.send({ jsonrpc: '2.0', id: 'abc', method: 'environment/status' });
    expect(await session.waitFor((m) => m.id === 'abc')).toEqual({ id: 'abc', result: { status: 'ready' } });
  });
});

describe('processes', () => {
  it('runs echo: start result, output, exited, closed with one seq, then reads (T2)', async () => {
    const session = await ready();
    const started = await session.request('process/start', start('p1', ['sh', '-c', 'echo a; echo b >&2']));
    expect(started.result).toEqual({ processId: 'p1', sandboxType: 'none' });
    const events = await session.finished('p1');
    expect(events.map((m) => m.params!.seq)).toEqual(events.map((_m, index) => index + 1));
    expect(events.at(-1)!.method).toBe('process/closed');
    const exited = events.find((m) => m.method === 'process/exited')!;
    expect(exited.params).toMatchObject({ exitCode: 0, sandboxDenied: false });
    const streams = events.filter((m) => m.method === 'process/output').map((m) => m.params!.stream);
    expect(streams.sort()).toEqual(['stderr', 'stdout']);
    expect(session.output('p1').split('\n').sort()).toEqual(['', 'a', 'b']);

    const all = (await session.request('process/read', { processId: 'p1' })).result!;
    expect(all).toMatchObject({
      exited: true,
      exitCode: 0,
      closed: true,
      failure: null,
      sandboxDenied: false,
    });
    // Without maxBytes, nextSeq is the next unused seq (after exited and closed).
    expect(all.nextSeq).toBe(events.length + 1);
    const paged = (await session.request('process/read', { processId: 'p1', afterSeq: null, maxBytes: 0 }))
      .result!;
    // With maxBytes, at least one chunk comes back and nextSeq follows it.
    expect(paged.chunks).toHaveLength(1);
    expect(paged.nextSeq).toBe((paged.chunks as { seq: number }[])[0]!.seq + 1);
    // afterSeq skips what came before: the chunks after seq 1, of which there is one at least (stdout and
    // stderr came in chunks of their own).
    const later = (all.chunks as { seq: number }[]).filter((chunk) => chunk.seq > 1);
    expect(later.length).toBeGreaterThan(0);
    const after = (await session.request('process/read', { processId: 'p1', afterSeq: 1 })).result!;
    expect(after.chunks).toEqual(later);
    expect((await session.request('process/read', { processId: 'nope' })).error).toEqual({
      code: -32600,
      message: 'unknown process id nope',
    });
  });

  it('writes to a tty, de-duplicates a writeId, and stops on Ctrl-C (T3)', async () => {
    const session = await ready();
    await session.request(
      'process/start',
      start('cat1', ['cat'], { env: { PATH, TERM: 'xterm' }, tty: true }),
    );
    expect(
      (await session.request('process/write', { processId: 'cat1', chunk: b64('hi\n'), writeId: 'w1' }))
        .result,
    ).toEqual({
      status: 'accepted',
    });
    await session.waitFor(() => session.output('cat1') === 'hi\r\nhi\r\n');
    expect(
      (await session.request('process/write', { processId: 'cat1', chunk: b64('hi\n'), writeId: 'w1' }))
        .result,
    ).toEqual({
      status: 'accepted',
    });
    await session.request('process/write', { processId: 'cat1', chunk: b64('\u0003'), writeId: 'w2' });
    const events = await session.finished('cat1');
    // The duplicate wrote nothing: one echo and one copy only.
    expect(session.output('cat1')).toBe('hi\r\nhi\r\n^C');
    // ux reports a signal death as 128 + signal in a terminal too (Codex reports 1).
    expect(events.find((m) => m.method === 'process/exited')!.params!.exitCode).toBe(130);
    expect(
      (await session.request('process/write', { processId: 'nope', chunk: 'eA==', writeId: 'w4' })).result,
    ).toEqual({
      status: 'unknownProcess',
    });
  });

  it('keeps a pipe stdin only with pipeStdin, and never closes it by an empty write', async () => {
    const session = await ready();
    await session.request('process/start', start('nostdin', ['sleep', '5']));
    expect(
      (await session.request('process/write', { processId: 'nostdin', chunk: 'eA==', writeId: 'a' })).result,
    ).toEqual({
      status: 'stdinClosed',
    });
    await session.request('process/start', start('head', ['head', '-c', '5'], { pipeStdin: true }));
    expect(
      (await session.request('process/write', { processId: 'head', chunk: '', writeId: 'e' })).result,
    ).toEqual({
      status: 'accepted',
    });
    await session.request('process/write', { processId: 'head', chunk: b64('hello'), writeId: '1' });
    await session.finished('head');
    expect(session.output('head')).toBe('hello');
    await session.request('process/terminate', { processId: 'nostdin' });
  });

  it('answers terminate while a long read waits, and wakes the read (T4, concurrent dispatch)', async () => {
    const session = await ready();
    await session.request('process/start', start('sl', ['sleep', '100']));
    // The longest wait a read is granted (300 s): it can only answer within this test's time because
    // the process ended. The read goes down the pipe before the terminate, so it is waiting when that
    // arrives.
    const read = session.request('process/read', { processId: 'sl', afterSeq: 0, waitMs: 300_000 });
    const terminated = await session.request('process/terminate', { processId: 'sl' });
    expect(terminated.result).toEqual({ running: true });
    const readResult = (await read).result!;
    expect(readResult.exited || readResult.closed).toBe(true);
    const events = await session.finished('sl');
    expect(events.map((m) => [m.method, m.params!.seq])).toEqual([
      ['process/exited', 1],
      ['process/closed', 2],
    ]);
    // SIGTERM first (Codex's server sends SIGKILL at once and reports 137); sleep dies of it.
    expect(events[0]!.params!.exitCode).toBe(143);
    expect((await session.request('process/terminate', { processId: 'sl' })).result).toEqual({
      running: false,
    });
    expect((await session.request('process/terminate', { processId: 'never' })).result).toEqual({
      running: false,
    });
  });

  it('interrupts a pipe process with SIGINT, a trap included', async () => {
    const session = await ready();
    const script = "trap 'echo INT-TRAP; exit 42' INT; echo READY; while true; do sleep 1; done";
    await session.request('process/start', start('trap', ['sh', '-c', script]));
    await session.waitFor(() => session.output('trap').includes('READY'));
    expect(
      (await session.request('process/signal', { processId: 'trap', signal: 'interrupt' })).result,
    ).toEqual({});
    const events = await session.finished('trap');
    expect(session.output('trap')).toBe('READY\nINT-TRAP\n');
    expect(events.find((m) => m.method === 'process/exited')!.params!.exitCode).toBe(42);
    expect(
      (await session.request('process/signal', { processId: 'gone', signal: 'interrupt' })).result,
    ).toEqual({});
    expect(
      (await session.request('process/signal', { processId: 'trap', signal: 'terminate' })).error,
    ).toEqual({
      code: -32602,
      message: 'unknown variant "terminate", expected `interrupt`',
    });
  });

  it('builds the environment from envPolicy, or passes env exactly', async () => {
    const session = WireSession.start(['--listen', 'stdio'], {
      PATH,
      HOME: '/home/dev',
      X: '1',
      API_TOKEN: 'secret',
    });
    onTestFinished(async () => {
      await session.close();
    });
    await session.request('initialize', { clientName: 'c' });
    session.send({ method: 'initialized' });
    const policy = {
      inherit: 'all',
      ignoreDefaultExcludes: false,
      exclude: [],
      set: { FOO: 'bar' },
      includeOnly: [],
    };
    await session.request(
      'process/start',
      start('env1', ['env'], { env: { OVER: 'lay' }, envPolicy: policy }),
    );
    await session.finished('env1');
    const lines = session.output('env1').trim().split('\n').sort();
    expect(lines).toEqual(['FOO=bar', 'HOME=/home/dev', 'OVER=lay', `PATH=${PATH}`, 'X=1']);
    await session.request('process/start', start('env2', ['env'], { env: { ONLY: 'this' } }));
    await session.finished('env2');
    expect(session.output('env2')).toBe('ONLY=this\n');
  });

  it('gives the child the arg0 it asks for', async () => {
    const session = await ready();
    await session.request('process/start', start('a0', ['cat', '/proc/self/cmdline'], { arg0: 'renamed' }));
    await session.finished('a0');
    expect(session.output('a0').split('\0')[0]).toBe('renamed');
  });
});

describe('bad input', () => {
  it('answers malformed lines with id -1 and keeps the connection (T5)', async () => {
    const session = await ready();
    for (const line of [
      '{not json',
      '[{"id":1,"method":"x"}]',
      '{"id":null,"method":"x"}',
      '{"id":4.5,"method":"x"}',
      '42',
    ]) {
      session.send(line);
    }
    await session.waitFor(() => session.messages.filter((m) => m.id === -1).length === 5);
    const refusals = session.messages.filter((m) => m.id === -1);
    expect(refusals).toHaveLength(5);
    for (const message of refusals) {
      expect(message.error!.code).toBe(-32600);
      expect(message.error!.message).toMatch(/^failed to parse JSON-RPC message: /);
    }
    expect((await session.request('environment/status')).result).toEqual({ status: 'ready' });
  });

  it('names unknown methods and notifications, and unexpected responses', async () => {
    const session = await ready();
    expect((await session.request('process/resizePty', { processId: 'x' })).error).toEqual({
      code: -32601,
      message: 'exec-server does not implement `process/resizePty`',
    });
    session.send({ method: 'bogus/notify', params: {} });
    expect((await session.waitFor((m) => m.id === -1)).error).toEqual({
      code: -32601,
      message: 'unknown notification `bogus/notify`',
    });
    session.send({ id: 99, result: {} });
    await session.waitFor((m) => m.id === -1 && String(m.error?.message).includes('unexpected response'));
    expect((await session.request('environment/status')).result).toEqual({ status: 'ready' });
  });

  it('refuses bad start params with -32602 naming the problem, spawning nothing', async () => {
    const session = await ready();
    const dir = tempDir('ux-es-bad-');
    const marker = join(dir, 'ran');
    const touch = ['sh', '-c', `touch ${marker}`];
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [{ ...start('e1', touch), argv: [] }, -32602, /^argv must not be empty$/],
      [{ ...start('e2', touch), cwd: dir }, -32602, /^invalid URI in cwd: .* is not a URI/],
      [{ ...start('e3', touch), env: undefined }, -32602, /^missing field `env`$/],
      [{ ...start('e4', touch), tty: 'no' }, -32602, /^tty: Invalid input: expected boolean/],
      [{ ...start('e5', touch), processId: 9 }, -32602, /^processId: Invalid input: expected string/],
      [{ ...start('e6', touch), env: { PATH: 1 } }, -32602, /^env\.PATH: Invalid input/],
      [{ ...start('e7', touch), env: { 'A=B': 'x' } }, -32602, /env\.A=B: is not a valid variable name/],
      [{ ...start('e8', touch), argv: ['a\u0000b'] }, -32602, /argv\[0\]: must not contain a NUL byte/],
      [
        {
          ...start('e9', touch),
          shellSnapshot: { scopeId: 's', shell: { name: 'bash', path: 'bin/bash' } },
        },
        -32602,
        /shellSnapshot\.shell\.path must be an absolute path/,
      ],
      [{ ...start('e10', touch), enforceManagedNetwork: true }, -32602, /managed network/],
      [
        {
          ...start('e11', touch),
          sandbox: { permissions: { type: 'bogus' }, windowsSandboxLevel: 'disabled' },
        },
        -32602,
        /sandbox\.permissions/,
      ],
      [
        { ...start('e12', ['/nonexistent/bin']) },
        -32603,
        /^failed to start \/nonexistent\/bin: no such file$/,
      ],
      [
        { ...start('e13', touch), cwd: uri('/nonexistent-dir') },
        -32603,
        /working directory \/nonexistent-dir does not exist/,
      ],
    ];
    for (const [params, code, message] of cases) {
      const answer = await session.request('process/start', params);
      expect(answer.error?.code, JSON.stringify(params)).toBe(code);
      expect(answer.error?.message).toMatch(message);
    }
    expect((await session.request('process/start', null)).error).toEqual({
      code: -32602,
      message: 'process/start: params must be an object, not null',
    });
    expect(() => readFileSync(marker)).toThrow();
    // A failed start leaves its id free.
    expect((await session.request('process/start', start('e12', ['true']))).result).toEqual({
      processId: 'e12',
      sandboxType: 'none',
    });
    expect((await session.request('process/start', start('e12', ['true']))).error).toEqual({
      code: -32600,
      message: 'process e12 already exists',
    });
  });

  it('refuses bad write params: missing or empty writeId, bad base64', async () => {
    const session = await ready();
    expect((await session.request('process/write', { processId: 'x', chunk: 'eA==' })).error).toEqual({
      code: -32602,
      message: 'missing field `writeId`',
    });
    expect(
      (await session.request('process/write', { processId: 'x', chunk: 'eA==', writeId: '' })).error,
    ).toEqual({
      code: -32602,
      message: 'writeId must not be empty',
    });
    expect(
      (await session.request('process/write', { processId: 'x', chunk: '!!', writeId: 'a' })).error,
    ).toEqual({
      code: -32602,
      message: 'invalid base64',
    });
  });

  it('skips a line longer than 64 MiB with an error and stays usable', async () => {
    const session = await ready();
    const huge = `{"id":7,"method":"fs/readFile","params":{"path":"${'x'.repeat(65 * 1024 * 1024)}"}}`;
    session.send(huge);
    const complaint = await session.waitFor((m) => m.id === -1, 30_000);
    expect(complaint.error).toEqual({
      code: -32600,
      message: 'failed to parse JSON-RPC message: a line longer than 67108864 bytes was skipped',
    });
    expect(session.messages.some((m) => m.id === 7)).toBe(false);
    expect((await session.request('environment/status')).result).toEqual({ status: 'ready' });
  });
});

describe('lifecycle', () => {
  it('kills every process and exits 0 when a client disconnects mid-stream', async () => {
    const session = await ready();
    const dir = tempDir('ux-es-life-');
    const pidFile = join(dir, 'pid');
    await session.request(
      'process/start',
      start('loud', ['sh', '-c', `sleep 300 & echo $! > ${pidFile}; while true; do echo line; done`]),
    );
    await session.waitFor((m) => m.method === 'process/output');
    await until(() => pidIn(pidFile) !== undefined);
    const grandchild = Number(readFileSync(pidFile, 'utf8'));
    expect(isAlive(grandchild)).toBe(true);
    expect(await session.close()).toEqual({ code: 0, signal: null });
    expect(await waitUntilDead(grandchild)).toBe(true);
  });

  it('answers a request still waiting when the input ends, then exits 0', async () => {
    const session = await ready();
    await session.request('process/start', start('waiting', ['sleep', '300']));
    const id = 1000;
    // The read goes down the pipe before the end of the input: the server has it when the input ends.
    session.send({
      id,
      method: 'process/read',
      params: { processId: 'waiting', afterSeq: 0, waitMs: 60_000 },
    });
    expect(await session.close()).toEqual({ code: 0, signal: null });
    const answers = session.messages.filter((m) => m.id === id);
    expect(answers).toHaveLength(1);
    expect(answers[0]!.result).toMatchObject({ exited: true });
  });

  it.each(['SIGTERM', 'SIGINT'] as const)('stops cleanly on %s, killing its processes', async (signal) => {
    const session = await ready();
    const dir = tempDir('ux-es-sig-');
    const pidFile = join(dir, 'pid');
    await session.request('process/start', start('s', ['sh', '-c', `echo $$ > ${pidFile}; exec sleep 300`]));
    // Polled: the session's waitFor only looks again when a message arrives, and none may.
    await until(() => pidIn(pidFile) !== undefined);
    const pid = pidIn(pidFile)!;
    session.child.kill(signal);
    expect(await session.exited).toEqual({ code: 0, signal: null });
    expect(await waitUntilDead(pid)).toBe(true);
  });
});

describe('a slow client', () => {
  it('gets every byte in order: the server stops reading the process instead of dropping output', async () => {
    const session = await ready();
    // More than the 64 MiB backlog at which unpausable output would start to be skipped.
    const bytes = 80 * 1024 * 1024;
    session.child.stdout.pause();
    // Sent, not awaited: the answer waits behind the output this client is not reading yet.
    const id = 4242;
    session.send({
      id,
      method: 'process/start',
      params: start('flood', ['head', '-c', String(bytes), '/dev/zero']),
    });
    // Until the server has stopped reading the process: `head` is blocked writing what nobody reads.
    const flood = `head\0-c\0${bytes}\0/dev/zero\0`;
    await until(() => pidsRunning(flood).some(blockedInWrite), 30_000);
    session.child.stdout.resume();
    // 80 MiB as base64 JSON takes a loaded machine a while: deadlines of their own, not the default 10 s.
    const answer = await session.waitFor((m) => m.id === id && ('result' in m || 'error' in m), 50_000);
    expect(answer.result).toEqual({ processId: 'flood', sandboxType: 'none' });
    await session.waitFor((m) => m.method === 'process/closed' && m.params?.processId === 'flood', 50_000);
    const events = await session.finished('flood');
    const seqs = events.map((m) => Number(m.params!.seq));
    expect(seqs).toEqual(seqs.map((_seq, index) => index + 1));
    const total = events
      .filter((m) => m.method === 'process/output')
      .reduce((sum, m) => sum + Buffer.from(String(m.params!.chunk), 'base64').length, 0);
    expect(total).toBe(bytes);
  }, 150_000);
});

describe('fs methods (T6)', () => {
  it('reads files and metadata by file URI, with -32004 for missing paths', async () => {
    const session = await ready();
    const dir = tempDir('ux-es-fs-');
    writeFileSync(join(dir, 'a.txt'), 'hello file\n');
    expect(
      (await session.request('fs/readFile', { path: uri(join(dir, 'a.txt')), sandbox: null })).result,
    ).toEqual({
      dataBase64: b64('hello file\n'),
    });
    const missing = await session.request('fs/readFile', { path: uri(join(dir, 'missing.txt')) });
    expect(missing.error?.code).toBe(-32004);
    expect(missing.error?.message).toContain('No such file or directory');
    const meta = (await session.request('fs/getMetadata', { path: uri(join(dir, 'a.txt')) })).result!;
    expect(meta).toMatchObject({ isDirectory: false, isFile: true, isSymlink: false, size: 11 });
    expect(meta.modifiedAtMs).toBeGreaterThan(0);
    expect((await session.request('fs/getMetadata', { path: join(dir, 'a.txt') })).error?.code).toBe(-32602);
    await session.request('fs/writeFile', { path: uri(join(dir, 'b.txt')), dataBase64: b64('written') });
    expect(readFileSync(join(dir, 'b.txt'), 'utf8')).toBe('written');
    expect((await session.request('fs/readDirectory', { path: uri(dir) })).result!.entries).toEqual(
      expect.arrayContaining([{ fileName: 'a.txt', isDirectory: false, isFile: true }]),
    );
    expect((await session.request('fs/canonicalize', { path: uri(`${dir}/./a.txt`) })).result).toEqual({
      path: uri(join(dir, 'a.txt')),
    });
    const sandboxed = await session.request('fs/readFile', {
      path: uri(join(dir, 'a.txt')),
      sandbox: { permissions: { type: 'external', network: 'restricted' }, windowsSandboxLevel: 'disabled' },
    });
    expect(sandboxed.error?.message).toContain('fs methods with a sandbox are not supported');
  });
});
