// The control socket between two ends in this process (a real Unix socket in a temporary runtime
// root): hello, methods, errors, events by topic, bad input, stale sockets, permissions.
import { chmodSync, lstatSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir, useLeakCheck } from '@ux/test-utils';
import { afterEach, describe, expect, it } from 'vitest';
import { connectControl } from './connect-control.js';
import { ControlError } from './control-error.js';
import { controlDirectory, controlSocketPath } from './control-paths.js';
import { listControlProcesses } from './list-control-processes.js';
import { type ControlServer, startControlServer } from './start-control-server.js';

useLeakCheck();

const servers: ControlServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function root(): string {
  const dir = join(tempDir('ux-control-'), 'ux');
  mkdirSync(dir, { mode: 0o700 });
  return dir;
}

async function serve(runtimeRoot: string) {
  const server = await startControlServer({ kind: 'mcp', cwd: '/work', version: '9.9.9', runtimeRoot });
  servers.push(server);
  return server;
}

describe('the control server and client', () => {
  it('says hello, serves methods, answers errors by code, and keeps the connection after a bad line', async () => {
    const runtimeRoot = root();
    const server = await serve(runtimeRoot);
    expect(server.path).toBe(controlSocketPath(process.pid, runtimeRoot));
    expect(statSync(server.path).mode & 0o777).toBe(0o600);
    expect(statSync(controlDirectory(runtimeRoot)).mode & 0o777).toBe(0o700);
    server.handle('echo.back', (params) => params);
    server.handle('always.missing', () => {
      throw new ControlError('not_found', 'no session 7');
    });
    server.handle('always.broken', () => {
      throw new Error('a bug');
    });
    server.setInfo({ clientName: 'codex-mcp-client 1.0' });

    const client = await connectControl(process.pid, { runtimeRoot });
    expect(client.hello).toMatchObject({
      protocol: 1,
      pid: process.pid,
      kind: 'mcp',
      cwd: '/work',
      version: '9.9.9',
      clientName: 'codex-mcp-client 1.0',
    });
    expect(await client.call('echo.back', { a: [1, 'two'] })).toEqual({ a: [1, 'two'] });
    await expect(client.call('always.missing')).rejects.toMatchObject({
      controlCode: 'not_found',
      message: 'no session 7',
    });
    await expect(client.call('always.broken')).rejects.toMatchObject({
      controlCode: 'failed',
      message: 'a bug',
    });
    await expect(client.call('nothing.here')).rejects.toMatchObject({ controlCode: 'unknown_method' });

    // A raw client sending garbage gets an error line, and the next good request still works.
    const raw = connect(server.path);
    const lines: string[] = [];
    raw.on('data', (data) => lines.push(...data.toString().split('\n').filter(Boolean)));
    raw.write('garbage\n{"v":1,"id":5,"method":"echo.back","params":{"ok":true}}\n');
    await expect.poll(() => lines.length).toBe(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ id: 0, error: { code: 'bad_request' } });
    expect(JSON.parse(lines[1]!)).toEqual({ v: 1, id: 5, result: { ok: true } });
    raw.destroy();
    client.close();
  });

  it("sends a topic's events to its subscribers only, and forgets a client that left", async () => {
    const runtimeRoot = root();
    const server = await serve(runtimeRoot);
    let closes = 0;
    server.handle('news.watch', (_params, connection) => {
      connection.subscribe('news');
      connection.onClose(() => closes++);
      return { watching: true };
    });
    const watcher = await connectControl(process.pid, { runtimeRoot });
    const bystander = await connectControl(process.pid, { runtimeRoot });
    const seen: unknown[] = [];
    const unseen: unknown[] = [];
    watcher.on('news.added', (params) => seen.push(params));
    bystander.on('news.added', (params) => unseen.push(params));
    await watcher.call('news.watch');
    server.publish('news', 'news.added', { id: 1 });
    await expect.poll(() => seen).toEqual([{ id: 1 }]);
    expect(unseen).toEqual([]);
    watcher.close();
    await expect.poll(() => closes).toBe(1);
    server.publish('news', 'news.added', { id: 2 });
    bystander.close();
  });

  it('lists live processes, removes the sockets of dead ones, and removes its own at close', async () => {
    const runtimeRoot = root();
    const server = await serve(runtimeRoot);
    // A socket a process that is gone left behind (SIGKILL skips the clean-up): bound here under a pid
    // no process has (above the kernel's pid_max default), and a file that is not a socket.
    const dead = controlSocketPath(4_194_305, runtimeRoot);
    const leftover = createServer();
    await new Promise<void>((resolve) => leftover.listen(dead, resolve));
    writeFileSync(join(controlDirectory(runtimeRoot), 'notes.txt'), 'x');
    const listed = await listControlProcesses({ runtimeRoot });
    expect(listed.map((hello) => hello.pid)).toEqual([process.pid]);
    expect(() => lstatSync(dead)).toThrow();
    leftover.close();
    await server.close();
    expect(() => lstatSync(server.path)).toThrow();
    expect(await listControlProcesses({ runtimeRoot })).toEqual([]);
  });

  it('refuses a control directory open to others, and a pid that serves nothing', async () => {
    const runtimeRoot = root();
    await serve(runtimeRoot);
    chmodSync(controlDirectory(runtimeRoot), 0o755);
    await expect(connectControl(process.pid, { runtimeRoot })).rejects.toMatchObject({
      controlCode: 'unavailable',
      message: expect.stringContaining('is open to others (mode 755)'),
    });
    chmodSync(controlDirectory(runtimeRoot), 0o700);
    await expect(connectControl(999_999_999, { runtimeRoot })).rejects.toMatchObject({
      controlCode: 'not_found',
      message: 'no ux process 999999999 serves a control socket',
    });
  });
});
