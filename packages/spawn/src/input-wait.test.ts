import { describe, expect, it } from 'vitest';
import {
  type FileIdentity,
  type InputIdentity,
  type ProcReader,
  parseEpollTargets,
  parseProcStat,
  parseProcSyscall,
  probeInputWait,
  readCallOf,
} from './input-wait.js';

// Fixtures copied from a real /proc (kernel 6.18, x86_64); no process is started here.

const PTS: FileIdentity = { dev: 26, ino: 6, rdev: (136 << 8) | 3 };
const TERMINAL: InputIdentity = PTS;
const PIPE: InputIdentity = { dev: 8, ino: 11740377 };

interface FakeProcess {
  pid: number;
  ppid: number;
  pgrp?: number;
  state?: string;
  ttyNr?: number;
  tpgid?: number;
  comm?: string;
  syscall?: string;
  children?: number[];
  fds?: Record<number, FileIdentity>;
  fdinfo?: Record<number, string>;
  /** Other threads: tid → [state, syscall]. */
  threads?: Record<number, [string, string]>;
}

function stat(p: FakeProcess, pid = p.pid, state = p.state ?? 'S'): string {
  return `${pid} (${p.comm ?? 'proc'}) ${state} ${p.ppid} ${p.pgrp ?? p.pid} ${p.pid} ${p.ttyNr ?? 0} ${p.tpgid ?? -1} 4194304 3375 6535 3 0 3 0 3 1 20 0 1 0 4553229\n`;
}

function fakeProc(processes: FakeProcess[]): ProcReader {
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  return {
    readText(path) {
      const match = /^\/proc\/(\d+)\/(.*)$/.exec(path);
      if (!match) return undefined;
      const p = byPid.get(Number(match[1]));
      if (!p) return undefined;
      const rest = match[2]!;
      const tids = [p.pid, ...Object.keys(p.threads ?? {}).map(Number)];
      if (rest === 'stat') return stat(p);
      if (rest === 'task') return tids.join('\n');
      const task = /^task\/(\d+)\/(stat|syscall|children)$/.exec(rest);
      if (task) {
        const tid = Number(task[1]);
        const thread = tid === p.pid ? undefined : p.threads?.[tid];
        if (tid !== p.pid && !thread) return undefined;
        if (task[2] === 'stat') return stat(p, tid, thread ? thread[0] : p.state);
        if (task[2] === 'syscall') return `${thread ? thread[1] : (p.syscall ?? 'running')}\n`;
        return tid === p.pid ? `${(p.children ?? []).join(' ')} ` : '';
      }
      const info = /^fdinfo\/(\d+)$/.exec(rest);
      if (info) return p.fdinfo?.[Number(info[1])];
      return undefined;
    },
    stat(path) {
      const match = /^\/proc\/(\d+)\/fd\/(\d+)$/.exec(path);
      if (!match) return undefined;
      return byPid.get(Number(match[1]))?.fds?.[Number(match[2])];
    },
  };
}

const onTerminal = { 0: PTS, 1: PTS, 2: PTS };
const probe = (processes: FakeProcess[], input: InputIdentity | undefined = TERMINAL, leaderPid = 100) =>
  probeInputWait({ leaderPid, input, arch: 'x64', reader: fakeProc(processes) });

describe('parseProcStat', () => {
  it('reads the fields after the last parenthesis: a name cannot forge them', () => {
    const text = '4242 (evil) R 1 2 3 4 5) S 7 4242 4242 34819 4242 4194304 1 2 3\n';
    expect(parseProcStat(text)).toEqual({
      pid: 4242,
      state: 'S',
      ppid: 7,
      pgrp: 4242,
      ttyNr: 34819,
      tpgid: 4242,
    });
  });

  it('reads a real line, and refuses a cut one', () => {
    const line =
      '19823 (python3) S 19822 19823 19823 34819 19823 4194304 3375 6535 3 0 3 0 3 1 20 0 1 0 4553229 19128320 3777\n';
    expect(parseProcStat(line)).toMatchObject({
      pid: 19823,
      state: 'S',
      ppid: 19822,
      ttyNr: 34819,
      tpgid: 19823,
    });
    expect(parseProcStat('19823 (python3) S 19822')).toBeUndefined();
    expect(parseProcStat('garbage')).toBeUndefined();
  });
});

describe('parseProcSyscall and readCallOf', () => {
  it('pselect6 with one fd, read on fd 0, epoll_pwait, nanosleep, running', () => {
    const pselect = parseProcSyscall(
      '270 0x1 0x7ffda216fb20 0x0 0x0 0x0 0x0 0x7ffda216fa90 0x7fc66651c954\n',
    );
    expect(readCallOf(pselect, 'x64')).toEqual({ kind: 'select', nfds: 1, readfds: 0x7ffda216fb20n });
    const read = parseProcSyscall(
      '0 0x0 0x55dc946bbf40 0x1000 0x0 0x7f9f22b3fc68 0x0 0x7ffd34366198 0x7f9f22a642ad',
    );
    expect(readCallOf(read, 'x64')).toEqual({ kind: 'read', fd: 0 });
    const epoll = parseProcSyscall(
      '281 0xd 0x7fff4ae771e0 0x400 0x1f9e 0x0 0x8 0x7fff4ae76480 0x7f8e6ca46cae',
    );
    expect(readCallOf(epoll, 'x64')).toEqual({ kind: 'epoll', epfd: 13 });
    const sleep = parseProcSyscall(
      '230 0x0 0x0 0x7fff43e1f140 0x7fff43e1f180 0x0 0x0 0x7fff43e1f128 0x7f8dc9aa0503',
    );
    expect(readCallOf(sleep, 'x64')).toBeUndefined();
    expect(parseProcSyscall('running\n')).toBe('running');
    expect(readCallOf('running', 'x64')).toBeUndefined();
    expect(parseProcSyscall('-1 0x7ffd 0x7f00\n')).toBeUndefined();
  });

  it('numbers per architecture: 63 is read on arm64, not on x64; an unknown architecture reads nothing', () => {
    const call = parseProcSyscall('63 0x0 0x1000 0x100 0x0 0x0 0x0 0x0 0x0');
    expect(readCallOf(call, 'arm64')).toEqual({ kind: 'read', fd: 0 });
    expect(readCallOf(call, 'x64')).toBeUndefined();
    expect(readCallOf(call, 'riscv64')).toBeUndefined();
  });
});

describe('parseEpollTargets', () => {
  it('reads tfd, events, ino and the device (converted from the kernel encoding)', () => {
    const fdinfo = `pos:\t0\nflags:\t02000002\nmnt_id:\t17\nino:\t18\ntfd:       14 events:       19 data:                e  pos:0 ino:b31f79 sdev:f\ntfd:       20 events:       19 data:               14  pos:0 ino:9 sdev:1a\ntfd:        5 events:       19 data:               14  pos:0 ino:2a sdev:800001\n`;
    expect(parseEpollTargets(fdinfo)).toEqual([
      { fd: 14, events: 0x19, ino: 0xb31f79, dev: 15 },
      { fd: 20, events: 0x19, ino: 9, dev: 26 },
      // major 8, minor 1 (a disk): 8 << 8 | 1 in stat's encoding.
      { fd: 5, events: 0x19, ino: 0x2a, dev: (8 << 8) | 1 },
    ]);
  });
});

describe('probeInputWait', () => {
  const python = (over: Partial<FakeProcess> = {}): FakeProcess => ({
    pid: 100,
    ppid: 1,
    ttyNr: PTS.rdev,
    tpgid: 100,
    comm: 'python3',
    syscall: '270 0x1 0x7ffda216fb20 0x0 0x0 0x0 0x0 0x7ffda216fa90 0x7fc66651c954',
    fds: onTerminal,
    ...over,
  });

  it('python3 -q on its terminal, in pselect6 on fd 0 alone: waiting', () => {
    expect(probe([python()])).toBe(true);
  });

  it('pselect6 of several fds does not count (its fd set is not read): only fd 0 alone does', () => {
    expect(probe([python({ syscall: '270 0x4 0x7ffda216fb20 0x0 0x0 0x0 0x0 0x0 0x0' })])).toBe(false);
    // fd 0 alone, but fd 0 is not the terminal (redirected from a file): not waiting.
    expect(probe([python({ fds: { 0: { dev: 2049, ino: 99, rdev: 0 } } })])).toBe(false);
  });

  it('sleep 100 (nanosleep) is not waiting; nor a read of a file, nor a running process', () => {
    expect(probe([python({ syscall: '230 0x0 0x0 0x7fff43e1f140 0x7fff43e1f180 0x0 0x0 0x0 0x0' })])).toBe(
      false,
    );
    expect(
      probe([
        python({
          syscall: '0 0x5 0x1000 0x100 0x0 0x0 0x0 0x0 0x0',
          fds: { ...onTerminal, 5: { dev: 2049, ino: 1234, rdev: 0 } },
        }),
      ]),
    ).toBe(false);
    expect(probe([python({ state: 'R', syscall: 'running' })])).toBe(false);
  });

  it('a shell in wait4 whose child reads the terminal: waiting; a busy thread elsewhere in it: not', () => {
    const shell: FakeProcess = {
      pid: 100,
      ppid: 1,
      ttyNr: PTS.rdev,
      tpgid: 100,
      syscall: '61 0xffffffff 0x7ffc049480dc 0x0 0x0 0x2 0x1 0x0 0x0',
      children: [101],
      fds: onTerminal,
    };
    const reader: FakeProcess = {
      pid: 101,
      ppid: 100,
      pgrp: 100,
      ttyNr: PTS.rdev,
      tpgid: 100,
      syscall: '0 0x0 0x55 0x1000 0x0 0x0 0x0 0x0 0x0',
      fds: onTerminal,
    };
    expect(probe([shell, reader])).toBe(true);
    expect(probe([shell, { ...reader, threads: { 102: ['R', 'running'] } }])).toBe(false);
  });

  it('with a controlling terminal, only its foreground group counts: a background reader is not waiting', () => {
    const shell: FakeProcess = {
      pid: 100,
      ppid: 1,
      ttyNr: PTS.rdev,
      tpgid: 200,
      syscall: '230 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0',
      children: [101],
      fds: onTerminal,
    };
    const background: FakeProcess = {
      pid: 101,
      ppid: 100,
      pgrp: 101,
      ttyNr: PTS.rdev,
      tpgid: 200,
      syscall: '0 0x0 0x55 0x1000 0x0 0x0 0x0 0x0 0x0',
      fds: onTerminal,
    };
    expect(probe([shell, background])).toBe(false);
    // The same reader in the foreground: waiting.
    expect(
      probe([
        { ...shell, tpgid: 101 },
        { ...background, tpgid: 101 },
      ]),
    ).toBe(true);
  });

  it('a pid in a children list that is not the child (reused) is not followed', () => {
    const shell: FakeProcess = {
      pid: 100,
      ppid: 1,
      syscall: '61 0xffffffff 0x0 0x0 0x0 0x0 0x0 0x0 0x0',
      children: [101],
      fds: onTerminal,
    };
    const stranger: FakeProcess = {
      pid: 101,
      ppid: 55,
      syscall: '0 0x0 0x55 0x1000 0x0 0x0 0x0 0x0 0x0',
      fds: onTerminal,
    };
    expect(probe([shell, stranger])).toBe(false);
  });

  it('a node REPL: epoll_pwait on an instance watching the terminal for input', () => {
    const node = python({
      comm: 'node',
      syscall: '281 0xd 0x7fff4ae771e0 0x400 0x1f9e 0x0 0x8 0x0 0x0',
      fdinfo: {
        13: 'pos:\t0\ntfd:       14 events:       19 data:                e  pos:0 ino:b31f79 sdev:f\ntfd:       20 events:       19 data:               14  pos:0 ino:6 sdev:1a\n',
      },
      threads: { 101: ['S', '202 0x2024f730 0x189 0x0 0x0 0x0 0x0 0x0 0x0'] },
    });
    expect(probe([node])).toBe(true);
    // The same server without the terminal among its watched files (a dev server): not waiting.
    const server = python({
      ...node,
      fdinfo: { 13: 'tfd:       14 events:       19 data:                e  pos:0 ino:b31f79 sdev:f\n' },
    });
    expect(probe([server])).toBe(false);
  });

  it('poll never counts: which fds it reads is in the process memory, which is not read', () => {
    expect(probe([python({ syscall: '7 0x7ffc00001000 0x1 0xffffffff 0x0 0x0 0x0 0x0 0x0' })])).toBe(false);
  });

  it('/dev/tty counts while the terminal is the controlling one', () => {
    const devTty: FileIdentity = { dev: 6, ino: 11, rdev: (5 << 8) | 0 };
    const sudo = python({
      syscall: '0 0x4 0x55 0x1000 0x0 0x0 0x0 0x0 0x0',
      fds: { ...onTerminal, 4: devTty },
    });
    expect(probe([sudo])).toBe(true);
    expect(probe([{ ...sudo, ttyNr: 0, tpgid: -1 }])).toBe(false);
  });

  it('a tree too big to read within the budget is unknown, not guessed', () => {
    const leader: FakeProcess = {
      pid: 100,
      ppid: 1,
      syscall: '61 0xffffffff 0x0 0x0 0x0 0x0 0x0 0x0 0x0',
      fds: onTerminal,
      children: [],
    };
    const threads: FakeProcess['threads'] = {};
    for (let tid = 1000; tid < 4000; tid++) threads[tid] = ['S', '202 0x0 0x0 0x0 0x0 0x0 0x0 0x0 0x0'];
    expect(probe([{ ...leader, threads }])).toBeUndefined();
    expect(probe([leader])).toBe(false);
  });

  it('a stdin pipe: read on it waits; a session without stdin never does; a gone launcher is unknown', () => {
    const cat: FakeProcess = {
      pid: 100,
      ppid: 1,
      syscall: '0 0x0 0x7f658600c000 0x20000 0x0 0x0 0x0 0x0 0x0',
      fds: { 0: { ...PIPE, rdev: 0 } },
    };
    expect(probe([cat], PIPE)).toBe(true);
    expect(probe([cat], undefined)).toBe(false);
    expect(probe([cat], PIPE, 4242)).toBeUndefined();
    expect(probe([{ ...cat, state: 'Z' }], PIPE)).toBeUndefined();
  });
});
