// ux's exec-server client (the exec-server spawner of @ux/exec-server-client) against Codex's real exec-server
// 0.169.0, started over stdio as the native binary. Codex's documented differences from ux's server are
// asserted as they are (a terminal's signal death reads as exit 1; no resize).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  connectWebSocketExecServer,
  createExecServerSpawner,
  ExecServerRequestError,
  spawnStdioExecServer,
} from '../../packages/exec-server-client/dist/index.js';
// Outside the pnpm workspace: the packages are loaded from their builds (`pnpm build` first).
import { runToEnd, waitForOutput } from '../../packages/protocol-testing/dist/index.js';
import { useLeakCheck } from '../../tooling/test-utils/dist/index.js';

const here = dirname(fileURLToPath(import.meta.url));
const CODEX = join(here, 'node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex');
const PATH = '/usr/local/bin:/usr/bin:/bin';
const request = { cwd: '/tmp', env: { PATH }, tty: false, stdin: 'closed' as const };

if (!existsSync(CODEX)) {
  throw new Error(`Codex is not installed: run \`npm ci --prefix ${here}\` (expected ${CODEX})`);
}

const codexHome = mkdtempSync(join(tmpdir(), 'ux-interop-codex-home-'));
const stderr: string[] = [];
const codex = createExecServerSpawner({
  name: 'codex exec-server',
  connect: () =>
    spawnStdioExecServer({
      command: CODEX,
      args: ['exec-server', '--listen', 'stdio'],
      env: { ...process.env, CODEX_HOME: codexHome },
      onStderr: (text) => stderr.push(text),
    }),
});

beforeAll(async () => {
  await codex.connection();
});
useLeakCheck(5_000);
afterAll(async () => {
  await codex.close();
  rmSync(codexHome, { recursive: true, force: true });
});

describe('ux client → Codex 0.169.0 exec-server', () => {
  it('completes the handshake and reads the environment', async () => {
    const client = await codex.connection();
    expect(client.environmentInfo.executorVersion).toBe('0.169.0');
    expect(client.environmentInfo.platformOs).toBe('linux');
    expect(client.sessionId).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('runs echo through a pipe, stdout and stderr in order', async () => {
    const child = await codex.spawn({
      ...request,
      argv: ['sh', '-c', 'echo hello; sleep 0.1; echo oops >&2; exit 3'],
    });
    expect(child.sandboxType).toBe('none');
    const { text, status } = await runToEnd(child);
    expect(text).toBe('hello\noops\n');
    expect(status).toEqual({ exitCode: 3, sandboxDenied: false });
  });

  it('writes to a tty cat and stops it with Ctrl-C (Codex reports exit 1)', async () => {
    const child = await codex.spawn({ ...request, argv: ['cat'], env: { PATH, TERM: 'xterm' }, tty: true });
    expect(child.resize).toBeUndefined();
    await child.write('hi\n');
    await waitForOutput(child, 'hi\r\nhi\r\n');
    await child.write('\u0003');
    const status = await child.exited;
    await child.closed;
    expect(status.exitCode).toBe(1);
  });

  it('terminates a sleep (SIGKILL, exit 137), idempotently', async () => {
    const child = await codex.spawn({ ...request, argv: ['sleep', '100'] });
    await child.terminate();
    expect((await child.exited).exitCode).toBe(137);
    await child.closed;
    await child.terminate();
    expect(child.exitStatus()?.exitCode).toBe(137);
  });

  it('interrupts a non-tty process with a trap, and one without', async () => {
    const script = "trap 'echo INT-TRAP; exit 42' INT; echo READY; while true; do sleep 30; done";
    const trapped = await codex.spawn({ ...request, argv: ['sh', '-c', script] });
    // One listener from the start: output arriving while the interrupt is in flight must not fall
    // between two listeners.
    let text = '';
    trapped.onOutput((chunk) => {
      text += Buffer.from(chunk).toString('utf8');
    });
    for (const deadline = Date.now() + 10_000; !text.includes('READY') && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 10));
    await trapped.interrupt();
    const status = await trapped.exited;
    await trapped.closed;
    expect(text).toBe('READY\nINT-TRAP\n');
    expect(status.exitCode).toBe(42);

    const plain = await codex.spawn({ ...request, argv: ['sh', '-c', 'echo READY; exec sleep 30'] });
    await waitForOutput(plain, 'READY');
    await new Promise((resolve) => setTimeout(resolve, 100));
    await plain.interrupt();
    expect((await plain.exited).exitCode).toBe(130);
    await plain.closed;
  });

  it('names an unknown process id', async () => {
    const client = await codex.connection();
    const error = await client
      .request('process/read', { processId: 'no-such-process' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecServerRequestError);
    expect(error).toMatchObject({
      wireCode: -32600,
      code: 'exec_server_request_failed',
      message: 'unknown process id no-such-process',
    });
    expect(
      await client.request('process/write', { processId: 'no-such-process', chunk: 'eA==', writeId: '1' }),
    ).toEqual({
      status: 'unknownProcess',
    });
    expect(await client.request('process/terminate', { processId: 'no-such-process' })).toEqual({
      running: false,
    });
  });

  it('delivers 5 MB of output whole, in order', async () => {
    const bytes = 5 * 1000 * 1000;
    // Every 8-byte record names its own offset, so a lost or reordered chunk cannot pass.
    const child = await codex.spawn({
      ...request,
      argv: ['sh', '-c', `seq -w 0 8 ${bytes - 8} | head -c ${bytes}`],
    });
    const { output, status } = await runToEnd(child, 30_000);
    expect(status.exitCode).toBe(0);
    expect(output.length).toBe(bytes);
    const text = output.toString('latin1');
    for (const offset of [0, 8 * 1234, bytes / 2 - ((bytes / 2) % 8), bytes - 8]) {
      expect(Number(text.slice(offset, offset + 7))).toBe(offset);
    }
  });

  it('refuses bad start params with Codex’s own messages, surfaced as errors', async () => {
    const error = await codex.spawn({ ...request, argv: ['/nonexistent/program'] }).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'failed to start /nonexistent/program: codex exec-server could not start it: No such file or directory (os error 2)',
    );
  });

  it('connects over WebSocket with a capability token, and is refused without the right one', async () => {
    const tokenFile = join(codexHome, 'ws-token');
    writeFileSync(tokenFile, 'interop-token\n', { mode: 0o600 });
    const server = spawn(
      CODEX,
      [
        'exec-server',
        '--listen',
        'ws://127.0.0.1:0',
        '--ws-auth',
        'capability-token',
        '--ws-token-file',
        tokenFile,
      ],
      { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, CODEX_HOME: codexHome } },
    );
    const exited = new Promise((resolve) => server.once('close', resolve));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        server.stdout.setEncoding('utf8').on('data', (text: string) => {
          const found = /ws:\/\/\S+/.exec(text);
          if (found) resolve(found[0]);
        });
        server.once('close', () => reject(new Error('codex exited before listening')));
      });
      const good = createExecServerSpawner({
        connect: () => connectWebSocketExecServer({ url, token: 'interop-token' }),
      });
      const child = await good.spawn({ ...request, argv: ['echo', 'via-websocket'] });
      expect((await runToEnd(child)).text).toBe('via-websocket\n');
      await good.close();
      const bad = createExecServerSpawner({
        connect: () => connectWebSocketExecServer({ url, token: 'guess' }),
      });
      await expect(bad.spawn({ ...request, argv: ['true'] })).rejects.toThrow('answered HTTP 401');
    } finally {
      server.stdin.end();
      server.kill('SIGKILL');
      await exited;
    }
  });
});
