// ux-sandbox-exec's command line, run directly (and under a bare bwrap where a filter must be in place
// before it starts): the old form, the exit statuses, and the failures that must stop the command
// before it runs (exit 125, "ux: sandbox setup failed: …").
import { type ChildProcessByStdio, execFileSync, spawn } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { isAlive } from '@ux/protocol-testing';
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

describe('ux-sandbox-exec as the sandbox’s init', () => {
  it('ends with a command that ends at once: its SIGCHLD is never lost (150 runs)', async () => {
    // As pid 1 of bwrap's namespace, a SIGCHLD that arrives while not blocked is discarded (init gets
    // no signal it has no handler for). The helper used to block it only after the fork, so a command
    // as quick as `env` could end first, and the helper waited for ever beside a zombie.
    const socketPath = join(root, 'bridge.sock');
    const server: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    const hex = Buffer.from(buildSeccompProgram(arch, 'proxied')).toString('hex');
    try {
      for (let i = 0; i < 150; i++) {
        const child = spawn(
          shim,
          [
            '--launch',
            '--seccomp-program',
            hex,
            '--',
            bwrap,
            '--die-with-parent',
            '--unshare-user',
            '--unshare-pid',
            '--unshare-net',
            '--ro-bind',
            '/',
            '/',
            '--dev',
            '/dev',
            '--proc',
            '/proc',
            '--as-pid-1',
            '--',
            shim,
            '--seccomp-fd',
            '3',
            '--bridge',
            `3128=${socketPath}`,
            '--',
            // Half the runs a program that is not there: the command's process ends sooner still.
            i % 2 === 0 ? '/usr/bin/env' : '/no/such/program',
          ],
          { stdio: 'ignore' },
        );
        // A run that hangs is killed (the whole sandbox with it) and fails below; a bound, not a measure.
        const stuck = setTimeout(() => child.kill('SIGKILL'), 10_000);
        const ended = await new Promise<{ code: number | null; signal: string | null }>((resolve) =>
          child.once('close', (code, signal) => resolve({ code, signal })),
        );
        clearTimeout(stuck);
        expect(ended, `run ${i}`).toEqual({ code: i % 2 === 0 ? 0 : 127, signal: null });
      }
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 120_000);
});

describe('ux-sandbox-exec as the helper: how it waits', () => {
  it('reports the command’s status even when it starts with SIGCHLD ignored', async () => {
    // An inherited SIG_IGN for SIGCHLD makes the kernel reap the command itself, with no signal and no
    // status: the helper used to poll its signalfd for ever. It now puts SIGCHLD back to its default
    // before the fork. Run outside bwrap (not pid 1) on a free port, started by python3 with the
    // signal ignored; a hang is killed and fails the test by its status.
    const socketPath = join(root, 'ignored-chld.sock');
    const server: Server = createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((resolve) => probe.close(() => resolve()));
    try {
      const child = spawn(
        'python3',
        [
          '-c',
          'import os, signal, sys; signal.signal(signal.SIGCHLD, signal.SIG_IGN); os.execv(sys.argv[1], sys.argv[1:])',
          shim,
          '--bridge',
          `${port}=${socketPath}`,
          '--',
          '/bin/sh',
          '-c',
          'exit 42',
        ],
        { stdio: 'ignore' },
      );
      const stuck = setTimeout(() => child.kill('SIGKILL'), 20_000);
      const ended = await new Promise<{ code: number | null; signal: string | null }>((resolve) =>
        child.once('close', (code, signal) => resolve({ code, signal })),
      );
      clearTimeout(stuck);
      expect(ended, 'a helper that missed the command’s end is killed after 20 s').toEqual({
        code: 42,
        signal: null,
      });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }, 30_000);
});

describe('ux-sandbox-exec --launch (the launcher bwrap starts through)', () => {
  const program = buildSeccompProgram(arch, 'restricted');
  const hex = Buffer.from(program).toString('hex');
  /** Runs argv with `files` open on the descriptors given as keys (3 and up). */
  function runWithFds(argv: string[], files: Record<number, string>) {
    const opened: Record<number, number> = {};
    for (const [fd, path] of Object.entries(files)) opened[Number(fd)] = openSync(path, 'r');
    const highest = Math.max(2, ...Object.keys(opened).map(Number));
    const stdio: (number | 'ignore' | 'pipe')[] = ['ignore', 'pipe', 'pipe'];
    for (let fd = 3; fd <= highest; fd++) stdio.push(opened[fd] ?? 'ignore');
    const child = spawn(argv[0]!, argv.slice(1), { stdio, env: { PATH: '/usr/bin:/bin' } });
    for (const fd of Object.values(opened)) closeSync(fd);
    let output = '';
    child.stdout?.on('data', (chunk) => {
      output += chunk;
    });
    child.stderr?.on('data', (chunk) => {
      output += chunk;
    });
    return new Promise<{ code: number | null; output: string }>((resolve) =>
      child.once('close', (code) => resolve({ code, output })),
    );
  }

  it('puts the program on fd 3 in a sealed memfd, keeps only --keep-fd descriptors, ignores the terminal signals', async () => {
    const inherited = file('inherited, must be closed');
    const kept = file('kept for the sandbox');
    // The launcher execs whatever it is given; python stands in for bwrap and reports what it got.
    const report = [
      'import fcntl, os',
      "print('fd3', os.readlink('/proc/self/fd/3'))",
      "print('cloexec', fcntl.fcntl(3, fcntl.F_GETFD) & fcntl.FD_CLOEXEC)",
      "print('seals', fcntl.fcntl(3, fcntl.F_GET_SEALS))",
      "print('program', os.read(3, 1 << 16).hex())",
      'try:',
      "    os.pwrite(3, b'x', 0)",
      "    print('written')",
      'except PermissionError:',
      "    print('write refused')",
      'try:',
      '    os.ftruncate(3, 0)',
      "    print('truncated')",
      'except PermissionError:',
      "    print('truncate refused')",
      "print('fd5', os.path.exists('/proc/self/fd/5'))",
      "print('fd12', os.read(12, 100).decode())",
      "ignored = int([l for l in open('/proc/self/status') if l.startswith('SigIgn:')][0].split()[1], 16)",
      "print('ignored', all(ignored >> (sig - 1) & 1 for sig in (1, 2, 3, 15)))",
    ].join('\n');
    const result = await runWithFds(
      [shim, '--launch', '--keep-fd', '12', '--seccomp-program', hex, '--', '/usr/bin/python3', '-c', report],
      { 3: inherited, 5: inherited, 12: kept },
    );
    expect(result.output.split('\n')).toEqual([
      expect.stringMatching(/^fd3 \/memfd:ux-seccomp/),
      'cloexec 0',
      // F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE
      'seals 15',
      `program ${hex}`,
      'write refused',
      'truncate refused',
      'fd5 False',
      'fd12 kept for the sandbox',
      'ignored True',
      '',
    ]);
    expect(result.code).toBe(0);
  });

  it('bwrap loads the program from it (--seccomp 3), or ux-sandbox-exec inside does (--as-pid-1, --seccomp-fd 3)', async () => {
    const bare = ['--unshare-user', '--unshare-pid', '--unshare-net', '--ro-bind', '/', '/', '--dev', '/dev'];
    const probe = [
      'import socket, os',
      'for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):',
      '    try:',
      '        socket.socket(socket.AF_INET, kind).close()',
      "        print('allowed')",
      '    except PermissionError:',
      "        print('refused')",
      "print(sorted(os.listdir('/proc/self/fd')))",
    ].join('\n');
    const enabled = Buffer.from(buildSeccompProgram(arch, 'proxied')).toString('hex');
    const byBwrap = await run([
      shim,
      '--launch',
      '--seccomp-program',
      hex,
      '--',
      bwrap,
      ...bare,
      '--proc',
      '/proc',
      '--seccomp',
      '3',
      '--',
      '/usr/bin/python3',
      '-c',
      probe,
    ]);
    // restricted: no IP socket; bwrap closed the program's descriptor (only python's own listing is open).
    expect(byBwrap).toEqual({ code: 0, signal: null, output: "refused\nrefused\n['0', '1', '2', '3']\n" });
    const byShim = await run([
      shim,
      '--launch',
      '--seccomp-program',
      enabled,
      '--',
      bwrap,
      ...bare,
      '--proc',
      '/proc',
      '--as-pid-1',
      '--',
      shim,
      '--seccomp-fd',
      '3',
      '--',
      '/usr/bin/python3',
      '-c',
      probe,
    ]);
    // proxied allows TCP, not UDP: the program given is the one in force, and fd 3 is closed.
    expect(byShim).toEqual({ code: 0, signal: null, output: "allowed\nrefused\n['0', '1', '2', '3']\n" });
  });

  it.each([
    [['--seccomp-program', 'abc', '--', '/bin/true'], '--seccomp-program needs an even number of hex digits'],
    [
      ['--seccomp-program', 'zz'.repeat(8), '--', '/bin/true'],
      '--seccomp-program holds a character that is not a hex digit',
    ],
    [['--seccomp-program', '00', '--', '/bin/true'], '--seccomp-program is not a seccomp program (1 bytes)'],
    [['--', '/bin/true'], '--launch needs --seccomp-program'],
    [
      ['--seccomp-program', '00'.repeat(8), '--', 'true'],
      '--launch needs the absolute path of bwrap after "--"',
    ],
    [
      ['--keep-fd', '3', '--seccomp-program', '00'.repeat(8), '--', '/bin/true'],
      '--keep-fd needs a descriptor above 3, got "3"',
    ],
  ])('refuses to start bwrap (exit 125) for %j', async (options, message) => {
    expect(await run([shim, '--launch', ...options])).toEqual({
      code: 125,
      signal: null,
      output: `ux: sandbox setup failed: ${message}\n`,
    });
  });

  it('fails closed (exit 125) where a memfd cannot be sealed: no file, no bwrap', async () => {
    // bwrap installs a filter that makes memfd_create look absent (ENOSYS), then runs the launcher.
    const absent = file(
      compileSeccompRules(arch, [{ syscall: 'memfd_create', errno: 38, why: 'an old kernel' }]),
    );
    const marker = join(root, 'ran-without-memfd');
    const result = await run(
      [
        bwrap,
        '--unshare-user',
        '--ro-bind',
        '/',
        '/',
        '--bind',
        root,
        root,
        '--dev',
        '/dev',
        '--seccomp',
        '3',
        '--',
        shim,
        '--launch',
        '--seccomp-program',
        hex,
        '--',
        '/bin/touch',
        marker,
      ],
      [absent],
    );
    expect(result.output).toBe(
      'ux: sandbox setup failed: cannot create a sealed memory file for the seccomp program (memfd_create: Function not implemented); ux needs memfd sealing (Linux 3.17 or later)\n',
    );
    expect(result.code).toBe(125);
    expect(existsSync(marker)).toBe(false);
  });
});

describe('ux-sandbox-exec --remove (through descriptors)', () => {
  it('removes a tree without following a link out of it: files, links, a fifo, unreadable and deep directories', async () => {
    const canary = join(root, 'canary');
    mkdirSync(canary);
    for (let i = 0; i < 20; i++) writeFileSync(join(canary, `keep-${i}`), 'mine');
    const tree = join(root, 'tree');
    mkdirSync(join(tree, 'a', 'b'), { recursive: true });
    writeFileSync(join(tree, 'a', 'b', 'file'), 'x');
    symlinkSync(canary, join(tree, 'to-canary'));
    symlinkSync(join(canary, 'keep-0'), join(tree, 'a', 'to-canary-file'));
    execFileSync('mkfifo', [join(tree, 'fifo')]);
    mkdirSync(join(tree, 'locked', 'inner'), { recursive: true });
    writeFileSync(join(tree, 'locked', 'inner', 'f'), 'x');
    chmodSync(join(tree, 'locked', 'inner'), 0o000);
    chmodSync(join(tree, 'locked'), 0o500);
    // Deeper than the remover holds descriptors for (64): moved up and removed in a later pass.
    let deep = join(tree, 'deep');
    for (let i = 0; i < 150; i++) deep = join(deep, 'd');
    mkdirSync(deep, { recursive: true });
    writeFileSync(join(deep, 'bottom'), 'x');
    const result = await run([shim, '--remove', tree, join(root, 'never-there')]);
    expect(result).toEqual({ code: 0, signal: null, output: '' });
    expect(existsSync(tree)).toBe(false);
    expect(readdirSync(canary).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `keep-${i}`).sort());
  });

  it('removes a link given as the path itself, not what it points to; refuses relative paths', async () => {
    const target = join(root, 'link-target');
    mkdirSync(target);
    writeFileSync(join(target, 'keep'), 'x');
    const link = join(root, 'a-link');
    symlinkSync(target, link);
    expect(await run([shim, '--remove', link])).toEqual({ code: 0, signal: null, output: '' });
    expect(existsSync(link)).toBe(false);
    expect(readdirSync(target)).toEqual(['keep']);
    expect(await run([shim, '--remove', 'relative/dir'])).toEqual({
      code: 1,
      signal: null,
      output: 'ux-sandbox-exec: could not remove relative/dir: Invalid argument\n',
    });
  });
});
