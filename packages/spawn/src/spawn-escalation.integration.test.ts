import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvalidArgumentsError } from '@ux/protocol';
import { runToEnd } from '@ux/protocol-testing';
import { useLeakCheck, warmUpSpawner } from '@ux/test-utils';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { createLocalSpawner } from './local-spawner.js';
import { ESCALATION_FD, type LocalSpawnRequest } from './spawn-escalation.js';

// A stand-in for the escalation broker of @ux/zsh-fork: it reads the token line and acks (or not).
// Node cannot receive the attached descriptor; the kernel closes it, which is all this side needs.
const spawner = createLocalSpawner();
const dir = mkdtempSync(join(tmpdir(), 'ux-spawn-esc-'));
const socketPath = join(dir, 'broker.sock');
const tokens: string[] = [];
let accept = true;
let server: Server;

beforeAll(async () => {
  await warmUpSpawner(spawner);
  server = createServer((connection) => {
    let line = '';
    connection.on('data', (chunk) => {
      line += chunk.toString('utf8');
      if (!line.includes('\n')) return;
      tokens.push(line.trim());
      if (accept) connection.end(Buffer.from([6]));
      else connection.destroy();
    });
    connection.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
});
useLeakCheck();
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const TOKEN = '0123456789abcdef0123456789abcdef';

async function start(request: Partial<LocalSpawnRequest> & { argv: string[] }) {
  const child = await spawner.spawn({
    cwd: '/',
    env: { PATH: '/usr/bin:/bin' },
    tty: false,
    stdin: 'closed',
    escalation: { socketPath, token: TOKEN, fd: ESCALATION_FD },
    ...request,
  });
  onTestFinished(() => child.terminate());
  return child;
}

describe.each([false, true])('tty=%s', (tty) => {
  it('hands the broker the token and leaves the command its socket at exactly the fd, nothing else', async () => {
    accept = true;
    const before = tokens.length;
    // The shell's own descriptors, listed while it waits for ls.
    const child = await start({ argv: ['/bin/sh', '-c', 'ls -lN /proc/$$/fd'], tty });
    const { status, text } = await runToEnd(child);
    expect(status.exitCode).toBe(0);
    const fds = [...text.matchAll(/ (\d+) -> (\S+)/g)].map((match) => [match[1]!, match[2]!] as const);
    expect(fds.map(([fd]) => Number(fd)).sort((a, b) => a - b)).toEqual([0, 1, 2, ESCALATION_FD]);
    expect(fds.find(([fd]) => fd === String(ESCALATION_FD))?.[1]).toMatch(/^socket:\[\d+\]$/);
    expect(tokens.slice(before)).toEqual([TOKEN]);
  });

  it('does not run the command when the broker refuses the token', async () => {
    accept = false;
    const child = await start({ argv: ['/bin/echo', 'ran'], tty });
    const { status, text } = await runToEnd(child);
    accept = true;
    expect(status.exitCode).toBe(127);
    expect(text).toContain(
      'ux: cannot connect the command to its escalation broker: the broker refused the token',
    );
    expect(text).not.toContain('ran');
  });
});

it('does not run the command when no broker listens at the path', async () => {
  const child = await start({
    argv: ['/bin/echo', 'ran'],
    escalation: { socketPath: join(dir, 'nobody.sock'), token: TOKEN, fd: ESCALATION_FD },
  });
  const { status, text } = await runToEnd(child);
  expect(status.exitCode).toBe(127);
  expect(text).toMatch(/escalation broker: .*nobody\.sock: No such file or directory/);
});

it('refuses escalation settings the helper could not honour', async () => {
  for (const escalation of [
    { socketPath: 'relative.sock', token: TOKEN, fd: ESCALATION_FD },
    { socketPath: `/${'x'.repeat(120)}`, token: TOKEN, fd: ESCALATION_FD },
    { socketPath, token: 'not hex', fd: ESCALATION_FD },
    { socketPath, token: TOKEN, fd: 3 },
  ]) {
    await expect(
      spawner.spawn({ argv: ['/bin/true'], cwd: '/', env: {}, tty: false, stdin: 'closed', escalation }),
    ).rejects.toBeInstanceOf(InvalidArgumentsError);
  }
});
