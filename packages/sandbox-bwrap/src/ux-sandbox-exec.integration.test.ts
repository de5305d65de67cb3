// ux-sandbox-exec's command line, run directly (and under a bare bwrap where a filter must be in place
// before it starts): the old form, the exit statuses, and the failures that must stop the command
// before it runs (exit 125, "ux: sandbox setup failed: …").
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { isAlive } from '@ux/protocol/testing';
import { useLeakCheck } from '@ux/test-utils';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findBwrap } from './find-bwrap.js';
import { checkedNativeBinary } from './native-path.js';
import { buildSeccompProgram, compileSeccompRules, hostSeccompArch } from './seccomp/seccomp-program.js';

const arch = hostSeccompArch()!;
let shim: string;
let bwrap: string;
let root: string;

beforeAll(() => {
  shim = checkedNativeBinary('ux-sandbox-exec');
  const found = findBwrap({ configured: undefined, path: process.env.PATH, cwd: process.cwd() });
  if ('reason' in found) throw new Error(found.reason);
  bwrap = found.path;
  root = realpathSync(mkdtempSync(join(tmpdir(), 'ux-sandbox-exec-')));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));
useLeakCheck();

let files = 0;
function file(contents: Uint8Array | string): string {
  const path = join(root, `f${++files}`);
  writeFileSync(path, contents);
  return path;
}

/** Runs argv with the given files open on descriptors 3, 4, …; resolves with the status and output. */
function run(argv: string[], fds: string[] = []) {
  const opened = fds.map((path) => openSync(path, 'r'));
  const child = spawn(argv[0]!, argv.slice(1), {
    stdio: ['ignore', 'pipe', 'pipe', ...opened],
    env: { PATH: '/usr/bin:/bin' },
  }) as ChildProcessByStdio<null, Readable, Readable>;
  for (const fd of opened) closeSync(fd);
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  return new Promise<{ code: number | null; signal: string | null; output: string }>((resolve) =>
    child.once('close', (code, signal) => resolve({ code, signal, output })),
  );
}

describe('ux-sandbox-exec', () => {
  it('keeps the old form: the program runs with its own exit status; 127 when missing, 126 when not runnable', async () => {
    expect(await run([shim, '/bin/sh', '-c', 'echo hi; exit 3'])).toEqual({
      code: 3,
      signal: null,
      output: 'hi\n',
    });
    const missing = await run([shim, '/no/such/program']);
    expect(missing).toEqual({
      code: 127,
      signal: null,
      output: 'ux: cannot run /no/such/program: No such file or directory\n',
    });
    const notExecutable = file('#!/bin/sh\n');
    expect((await run([shim, notExecutable])).code).toBe(126);
    expect((await run([shim])).code).toBe(127);
  });

  it('with options: the filter from the descriptor is in force, and the status (or the signal) passes through', async () => {
    const program = file(buildSeccompProgram(arch, 'proxied'));
    const socketTest =
      "import socket\ntry:\n    socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nexcept PermissionError:\n    print('udp refused')\n";
    const result = await run(
      [shim, '--seccomp-fd', '3', '--', '/usr/bin/python3', '-c', socketTest],
      [program],
    );
    expect(result).toEqual({ code: 0, signal: null, output: 'udp refused\n' });
    // The program's descriptor is closed before the command starts.
    const fds = await run(
      [
        shim,
        '--seccomp-fd',
        '3',
        '--',
        '/bin/sh',
        '-c',
        'for f in /proc/$$/fd/*; do readlink $f; done; exit 7',
      ],
      [program],
    );
    // stdin is /dev/null, so the listing ran; what else is open depends on the runner (pipes or sockets).
    expect(fds.output).toContain('/dev/null');
    expect(fds.output).not.toContain(program);
    expect(fds.code).toBe(7);
    expect(
      await run([shim, '--seccomp-fd', '3', '--', '/bin/sh', '-c', 'kill -TERM $$'], [program]),
    ).toMatchObject({ code: null, signal: 'SIGTERM' });
  });

  it.each([
    [['--seccomp-fd', '3', '--'], 'descriptor 3 does not hold a seccomp program (5 bytes)'],
    [['--seccomp-fd', '9', '--'], 'cannot read the seccomp program from descriptor 9: Bad file descriptor'],
    [['--seccomp-fd', 'x', '--'], '--seccomp-fd needs a descriptor number, got "x"'],
    [['--bogus', '--'], 'unknown option --bogus'],
    [
      ['--allow-unix', '/x', '--'],
      '--allow-unix needs --seccomp-fd (the filter that hands connect() to the supervisor)',
    ],
    [
      ['--seccomp-fd', '3', '--allow-unix', 'relative', '--'],
      '--allow-unix needs an absolute path, got "relative"',
    ],
    [['--bridge', '3128:/x', '--'], '--bridge needs PORT=/absolute/socket/path, got "3128:/x"'],
    [['--seccomp-fd', '3'], 'expected an option or "--" before the command, got "/bin/touch"'],
  ])('refuses to run the command (exit 125) for %j', async (options, message) => {
    const marker = join(root, `ran-${Math.random().toString(36).slice(2)}`);
    const result = await run([shim, ...options, '/bin/touch', marker], [file('12345')]);
    expect(result.output).toBe(`ux: sandbox setup failed: ${message}\n`);
    expect(result.code).toBe(125);
    expect(existsSync(marker)).toBe(false);
  });

  it('refuses to run the command when the bridge cannot listen (the port is taken)', async () => {
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const marker = join(root, 'ran-bridge');
    const program = file(buildSeccompProgram(arch, 'proxied'));
    try {
      const result = await run(
        [shim, '--seccomp-fd', '3', '--bridge', `${port}=/nonexistent.sock`, '--', '/bin/touch', marker],
        [program],
      );
      expect(result.output).toBe(
        `ux: sandbox setup failed: the proxy bridge cannot listen on 127.0.0.1:${port}: Address already in use\n`,
      );
      expect(result.code).toBe(125);
      expect(existsSync(marker)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it.each([
    ['pidfd_getfd', 'allowUnixSockets needs pidfd_getfd (Linux 5.6 or later): Function not implemented'],
    ['pidfd_open', 'allowUnixSockets needs pidfd_open (Linux 5.3 or later): Function not implemented'],
    [
      'seccomp',
      'allowUnixSockets needs seccomp user notification (Linux 5.0 or later): Function not implemented',
    ],
  ])('fails closed (exit 125) on a kernel without %s', async (syscall, message) => {
    // bwrap installs a filter that makes the call look absent (ENOSYS) before ux-sandbox-exec starts.
    const absent = file(compileSeccompRules(arch, [{ syscall, errno: 38, why: 'pretend an older kernel' }]));
    const program = file(buildSeccompProgram(arch, 'enabled', { superviseConnect: true }));
    const marker = join(root, `ran-${syscall}`);
    const result = await run(
      [
        bwrap,
        '--die-with-parent',
        '--unshare-user',
        '--unshare-pid',
        '--ro-bind',
        '/',
        '/',
        '--bind',
        root,
        root,
        '--dev',
        '/dev',
        '--proc',
        '/proc',
        '--seccomp',
        '3',
        '--',
        shim,
        '--seccomp-fd',
        '4',
        '--allow-unix',
        '/run/x.sock',
        '--connect-ip',
        '--',
        '/bin/touch',
        marker,
      ],
      [absent, program],
    );
    expect(result.output).toBe(`ux: sandbox setup failed: ${message}\n`);
    expect(result.code).toBe(125);
    expect(existsSync(marker)).toBe(false);
  });

  it('without a pid namespace to end it, the helper still ends with the command', async () => {
    const program = file(buildSeccompProgram(arch, 'enabled', { superviseConnect: true }));
    const listed = join(root, 'listed.sock');
    const result = await run(
      [shim, '--seccomp-fd', '3', '--allow-unix', listed, '--', '/bin/sh', '-c', 'sleep 0.2; echo done'],
      [program],
    );
    // The helper holds stderr until it exits: 'close' came, so it has; nothing of ours is left either way.
    expect(result).toEqual({ code: 0, signal: null, output: 'done\n' });
    const helpers = readdirSync('/proc').filter((name) => {
      try {
        return (
          readFileSync(`/proc/${name}/comm`, 'utf8').trim() === 'ux-sandbox-net' &&
          readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(listed) &&
          isAlive(Number(name))
        );
      } catch {
        return false;
      }
    });
    expect(helpers).toEqual([]);
  });
});
