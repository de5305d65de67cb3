import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { connectWebSocketExecServer, ExecServerClient } from '@ux/exec-server-client';
import { createLocalSpawner } from '@ux/spawn';
import { tempDir, useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { beforeAll, describe, expect, it } from 'vitest';
import { execServerCommand } from './exec-server-command.js';
import type { Io } from './io.js';
import { UsageError } from './usage-error.js';

// One spawner for the file, warmed up before the leak baseline: its host reaper lives as long as
// this process, as it does in the real command.
const spawner = createLocalSpawner();
beforeAll(async () => {
  await warmUpSpawner(spawner);
});
useLeakCheck(5_000);

function io() {
  const out: string[] = [];
  const err: string[] = [];
  // A home of its own: the command's UX_HOME (probe cache, quarantine) must not be the machine's.
  const home = tempDir('ux-cli-es-home-');
  const value: Io = {
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, UX_HOME: home },
    platform: 'linux',
  };
  return { io: value, out, err };
}

describe('ux exec-server', () => {
  it('prints its usage for --help', async () => {
    const { io: streams, out } = io();
    expect(await execServerCommand(['--help'], streams)).toBe(0);
    expect(out.join('')).toContain('Usage: ux exec-server --listen <stdio | ws://IP:PORT>');
  });

  it.each([
    [[], '--listen is required'],
    [['--listen', 'ws://127.0.0.1:0'], 'WebSocket connections need a capability token'],
    [
      ['--listen', 'stdio', '--sandbox-backends', 'nope'],
      'unknown sandbox backend "nope"; available: bwrap, seatbelt, windows-token',
    ],
  ])('refuses %j as a usage error', async (args, message) => {
    const error = await execServerCommand(args, io().io).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).message).toContain(message);
    expect((error as UsageError).helpCommand).toBe('ux exec-server --help');
  });

  it('serves the protocol on the given streams and stops with exit 0 when the input ends', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let received = '';
    output.setEncoding('utf8').on('data', (text: string) => {
      received += text;
    });
    const running = execServerCommand(['--listen', 'stdio'], io().io, {
      stdin: input,
      stdout: output,
      handleSignals: false,
      spawner,
    });
    input.write(
      '{"id":1,"method":"initialize","params":{"clientName":"cli-test"}}\n{"method":"initialized"}\n',
    );
    input.write(
      `${JSON.stringify({ id: 2, method: 'process/start', params: { processId: 'p', argv: ['echo', 'from-cli'], cwd: 'file:///tmp', env: { PATH: '/bin:/usr/bin' }, tty: false } })}\n`,
    );
    const deadline = Date.now() + 10_000;
    while (!received.includes('"process/closed"') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    const messages = received
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(messages.find((m) => m.id === 2)).toEqual({
      id: 2,
      result: { processId: 'p', sandboxType: 'none' },
    });
    const output_ = messages.find((m) => m.method === 'process/output') as { params: { chunk: string } };
    expect(Buffer.from(output_.params.chunk, 'base64').toString()).toBe('from-cli\n');
    input.end();
    expect(await running).toBe(0);
  });

  it('listens on WebSocket with a token file, prints the URL, and stops when asked', async () => {
    const dir = tempDir('ux-cli-es-');
    writeFileSync(join(dir, 'token'), 'cli-token\n');
    const streams = io();
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => {
      stop = resolve;
    });
    const running = execServerCommand(
      ['--listen', 'ws://127.0.0.1:0', '--ws-token-file', join(dir, 'token')],
      streams.io,
      {
        handleSignals: false,
        spawner,
        stop: stopped,
      },
    );
    const deadline = Date.now() + 10_000;
    while (streams.out.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const url = streams.out.join('').trim();
    expect(url).toMatch(/^ws:\/\/127\.0\.0\.1:\d+$/);
    const client = await ExecServerClient.connect(
      await connectWebSocketExecServer({ url, token: 'cli-token' }),
    );
    expect(client.sessionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(client.environmentInfo.platformOs).toBe('linux');
    await client.close();
    stop();
    expect(await running).toBe(0);
  });
});
