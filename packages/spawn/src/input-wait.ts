// "Waiting for input" on Linux, read from /proc: is a session's foreground process blocked reading the
// session's terminal or its stdin pipe? Everything here reads through a `ProcReader`, so the decision
// can be tested on fixtures (input-wait.test.ts) without starting a process; `procReader()` in
// proc-reader.ts is the real one.
//
// What a sandboxed process shows here is its own doing: it can look as if it waits for input (it can
// read its stdin) or not. The answer is advice for the model and the person, never a decision.

/** What identifies the session's input: the terminal's slave side, or the child's end of the stdin pipe. */
export interface InputIdentity {
  /** `st_dev` and `st_ino` of the file (the pts node, or the pipe/socket inode). */
  dev: number;
  ino: number;
  /** A terminal's device number (`st_rdev`), matched against a process's controlling terminal. */
  rdev?: number;
}

/** A file as `stat` (following the link) sees it. */
export interface FileIdentity {
  dev: number;
  ino: number;
  rdev: number;
}

/** How the probe reads /proc; paths are absolute (`/proc/123/stat`). */
export interface ProcReader {
  /** A file's text, or undefined when it cannot be read (gone, not allowed). */
  readText(path: string): string | undefined;
  /**
   * `stat` of a process's fd (`/proc/123/fd/0`), following the link; undefined when it cannot be read
   * or is not a terminal, pipe or socket (a file on a network or FUSE file system is never asked: its
   * `stat` could block).
   */
  stat(path: string): FileIdentity | undefined;
}

/** The fields of /proc/<pid>/stat the probe uses. */
export interface ProcStat {
  pid: number;
  state: string;
  ppid: number;
  pgrp: number;
  /** Controlling terminal's device number (0: none). */
  ttyNr: number;
  /** Foreground process group of the controlling terminal (-1: none). */
  tpgid: number;
}

/**
 * Parses /proc/<pid>/stat. The command name (field 2) is in parentheses and may itself hold spaces
 * and parentheses (a process chooses it): the fields after it start after the *last* `)`.
 */
export function parseProcStat(text: string): ProcStat | undefined {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const pid = Number(text.slice(0, open).trim());
  const rest = text
    .slice(close + 1)
    .trim()
    .split(/\s+/);
  // After the name: state ppid pgrp session tty_nr tpgid …
  if (rest.length < 6) return undefined;
  const [state, ppid, pgrp, , ttyNr, tpgid] = rest;
  const numbers = [pid, Number(ppid), Number(pgrp), Number(ttyNr), Number(tpgid)];
  if (!numbers.every(Number.isInteger) || !state || !/^[A-Za-z]$/.test(state)) return undefined;
  return {
    pid,
    state,
    ppid: numbers[1]!,
    pgrp: numbers[2]!,
    ttyNr: numbers[3]!,
    tpgid: numbers[4]!,
  };
}

/** /proc/<pid>/syscall: the syscall a sleeping thread is in and its arguments; `running` otherwise. */
export type ProcSyscall = { nr: number; args: bigint[] } | 'running';

export function parseProcSyscall(text: string): ProcSyscall | undefined {
  const words = text.trim().split(/\s+/);
  if (words[0] === 'running') return 'running';
  if (words.length < 2 || !/^-?\d+$/.test(words[0]!)) return undefined;
  const nr = Number(words[0]);
  // -1: blocked, but not in a syscall (a page fault, say).
  if (nr < 0) return undefined;
  const args: bigint[] = [];
  for (const word of words.slice(1, 7)) {
    if (!/^0x[0-9a-f]+$/i.test(word)) return undefined;
    args.push(BigInt(word));
  }
  return { nr, args };
}

/** One file an epoll instance watches, from /proc/<pid>/fdinfo/<epfd> (`tfd: … events: … ino: … sdev: …`). */
export interface EpollTarget {
  fd: number;
  events: number;
  ino: number;
  dev: number;
}

export function parseEpollTargets(fdinfo: string): EpollTarget[] {
  const targets: EpollTarget[] = [];
  for (const line of fdinfo.split('\n')) {
    const match =
      /^tfd:\s*(\d+)\s+events:\s*([0-9a-f]+)\s+data:\s*[0-9a-f]+\s+pos:\s*\d+\s+ino:\s*([0-9a-f]+)\s+sdev:\s*([0-9a-f]+)/i.exec(
        line.trim(),
      );
    if (!match) continue;
    targets.push({
      fd: Number(match[1]),
      events: Number.parseInt(match[2]!, 16),
      ino: Number.parseInt(match[3]!, 16),
      dev: userDev(Number.parseInt(match[4]!, 16)),
    });
  }
  return targets;
}

/**
 * fdinfo prints the kernel's own device number (major << 20 | minor); `stat` gives the user-space
 * encoding (`new_encode_dev`): convert, so the two compare.
 */
function userDev(kernelDev: number): number {
  const major = Math.floor(kernelDev / 2 ** 20);
  const minor = kernelDev % 2 ** 20;
  return (minor & 0xff) + major * 256 + Math.floor(minor / 256) * 2 ** 20;
}

/** How a syscall reads, for this purpose. */
export type ReadCall =
  | { kind: 'read'; fd: number }
  | { kind: 'select'; nfds: number; readfds: bigint }
  | { kind: 'poll'; fds: bigint; nfds: number }
  | { kind: 'epoll'; epfd: number };

type SyscallKind = 'read' | 'select' | 'poll' | 'epoll';

/** The read-family syscalls by number, per architecture (Node's `process.arch`). */
export const READ_SYSCALLS: Readonly<Record<string, Readonly<Record<number, SyscallKind>>>> = {
  // arch/x86/entry/syscalls/syscall_64.tbl
  x64: {
    0: 'read',
    17: 'read', // pread64
    19: 'read', // readv
    295: 'read', // preadv
    327: 'read', // preadv2
    23: 'select',
    270: 'select', // pselect6
    7: 'poll',
    271: 'poll', // ppoll
    232: 'epoll', // epoll_wait
    281: 'epoll', // epoll_pwait
    441: 'epoll', // epoll_pwait2
  },
  // include/uapi/asm-generic/unistd.h (no select, poll or epoll_wait there)
  arm64: {
    63: 'read',
    65: 'read', // readv
    67: 'read', // pread64
    69: 'read', // preadv
    286: 'read', // preadv2
    72: 'select', // pselect6
    73: 'poll', // ppoll
    22: 'epoll', // epoll_pwait
    441: 'epoll', // epoll_pwait2
  },
};

/** The read a syscall does, or undefined when it is not one (nanosleep, wait4, futex, …). */
export function readCallOf(syscall: ProcSyscall | undefined, arch: string): ReadCall | undefined {
  if (syscall === undefined || syscall === 'running') return undefined;
  const kind = READ_SYSCALLS[arch]?.[syscall.nr];
  const [a0 = 0n, a1 = 0n] = syscall.args;
  const small = (value: bigint) => (value >= 0n && value < 1n << 20n ? Number(value) : undefined);
  switch (kind) {
    case 'read': {
      const fd = small(a0);
      return fd === undefined ? undefined : { kind, fd };
    }
    case 'select': {
      const nfds = small(a0);
      return nfds === undefined ? undefined : { kind, nfds, readfds: a1 };
    }
    case 'poll': {
      const nfds = small(a1);
      return nfds === undefined ? undefined : { kind, fds: a0, nfds };
    }
    case 'epoll': {
      const epfd = small(a0);
      return epfd === undefined ? undefined : { kind, epfd };
    }
    default:
      return undefined;
  }
}

const EPOLLIN = 0x1;
/** Most processes of one session looked at per probe (more are not looked at). */
export const MAX_PROCESSES_PROBED = 256;

/** The /dev/tty node (5,0): a process that opened it reads its controlling terminal. */
const DEV_TTY_RDEV = (5 << 8) | 0;

export interface InputWaitOptions {
  /** The pid the spawner started (the launcher: the helper, bubblewrap, or the command). */
  leaderPid: number;
  /** The session's input; undefined when it has none (stdin /dev/null): then it never waits for input. */
  input: InputIdentity | undefined;
  /** Node's `process.arch`; default this one's. */
  arch?: string;
  reader: ProcReader;
}

/**
 * Whether the session's foreground processes are blocked reading its input: true or false, or
 * undefined when it cannot be told (the launcher is gone, /proc cannot be read, an architecture whose
 * syscall numbers are not known here).
 *
 * The processes looked at are the launcher and its descendants; with a terminal that is their
 * controlling terminal, only its foreground process group. The session waits when one of their
 * threads sleeps (state S) in a read of the input: read/readv on it, select/pselect of fd 0 alone when
 * fd 0 is the input, epoll_wait on an instance watching it for input (from the instance's fdinfo). It does not wait
 * while any of those threads is running (state R) or in uninterruptible sleep (D): a program still
 * busy is not waiting, even if another of its threads reads.
 */
export function probeInputWait(options: InputWaitOptions): boolean | undefined {
  const { leaderPid, input } = options;
  const arch = options.arch ?? process.arch;
  // A bounded look: a tree of hundreds of many-threaded processes is not read every 250 ms.
  const reader = budgeted(options.reader, MAX_PROC_READS);
  try {
    return probe(leaderPid, input, arch, reader);
  } catch (error) {
    if (error === OVER_BUDGET) return undefined;
    throw error;
  }
}

/** Most /proc files one probe reads; past it the answer is unknown. */
export const MAX_PROC_READS = 2048;
const OVER_BUDGET = Symbol('over budget');

function budgeted(reader: ProcReader, reads: number): ProcReader {
  let left = reads;
  const spend = <T>(read: () => T): T => {
    left -= 1;
    if (left < 0) throw OVER_BUDGET;
    return read();
  };
  return {
    readText: (path) => spend(() => reader.readText(path)),
    stat: (path) => spend(() => reader.stat(path)),
  };
}

function probe(
  leaderPid: number,
  input: InputIdentity | undefined,
  arch: string,
  reader: ProcReader,
): boolean | undefined {
  if (!READ_SYSCALLS[arch]) return undefined;
  const leaderText = reader.readText(`/proc/${leaderPid}/stat`);
  const leader = leaderText === undefined ? undefined : parseProcStat(leaderText);
  if (!leader || leader.state === 'Z' || leader.state === 'X') return undefined;
  if (!input) return false;

  const processes = descendants(leader, reader);
  // A terminal that is the session's controlling terminal: only its foreground group reads from it
  // (a background job that tries is stopped with SIGTTIN).
  const foreground =
    input.rdev !== undefined && leader.ttyNr === input.rdev && leader.tpgid > 0 ? leader.tpgid : undefined;
  const candidates =
    foreground === undefined ? processes : processes.filter((proc) => proc.pgrp === foreground);

  let reading = false;
  for (const proc of candidates) {
    const tids = threadsOf(proc.pid, reader);
    for (const tid of tids) {
      const base = `/proc/${proc.pid}/task/${tid}`;
      const statText = reader.readText(`${base}/stat`);
      const stat = statText === undefined ? undefined : parseProcStat(statText);
      if (!stat) continue;
      if (stat.state === 'R' || stat.state === 'D') return false;
      if (stat.state !== 'S' || reading) continue;
      const syscallText = reader.readText(`${base}/syscall`);
      const call = readCallOf(syscallText === undefined ? undefined : parseProcSyscall(syscallText), arch);
      if (call && readsInput(proc, call, input, reader)) reading = true;
    }
  }
  return reading;
}

/** The launcher and its descendants (at most `MAX_PROCESSES_PROBED`), via /proc/<pid>/task/<tid>/children. */
function descendants(leader: ProcStat, reader: ProcReader): ProcStat[] {
  const found: ProcStat[] = [leader];
  const seen = new Set([leader.pid]);
  for (let i = 0; i < found.length && found.length < MAX_PROCESSES_PROBED; i++) {
    const pid = found[i]!.pid;
    for (const tid of threadsOf(pid, reader)) {
      const children = reader.readText(`/proc/${pid}/task/${tid}/children`) ?? '';
      for (const word of children.trim().split(/\s+/)) {
        const child = Number(word);
        if (word === '' || !Number.isInteger(child) || seen.has(child)) continue;
        seen.add(child);
        const text = reader.readText(`/proc/${child}/stat`);
        const stat = text === undefined ? undefined : parseProcStat(text);
        if (stat && stat.ppid === pid) found.push(stat);
        if (found.length >= MAX_PROCESSES_PROBED) break;
      }
    }
  }
  return found;
}

function threadsOf(pid: number, reader: ProcReader): number[] {
  const text = reader.readText(`/proc/${pid}/task`);
  // A reader gives a directory as its names, one a line; without them, the main thread alone.
  if (text === undefined) return [pid];
  const tids = text
    .split(/\s+/)
    .filter((word) => /^\d+$/.test(word))
    .map(Number);
  return tids.length > 0 ? tids : [pid];
}

/** Whether a process's read call reads the session's input. */
function readsInput(proc: ProcStat, call: ReadCall, input: InputIdentity, reader: ProcReader): boolean {
  const isInput = (fd: number) => fdIsInput(proc, fd, input, reader);
  switch (call.kind) {
    case 'read':
      return isInput(call.fd);
    // Which fds a select or poll reads is in the process's memory, which is not read: a read of a
    // sandboxed process's memory can be made to block (a page served by userfaultfd), and the host
    // must never wait on what the sandbox controls. A select of fd 0 alone (nfds 1, a readline
    // prompt: python3, bash) is the one case the arguments settle; a poll never counts.
    case 'select':
      return call.nfds === 1 && call.readfds !== 0n && isInput(0);
    case 'poll':
      return false;
    case 'epoll': {
      const fdinfo = reader.readText(`/proc/${proc.pid}/fdinfo/${call.epfd}`);
      if (fdinfo === undefined) return false;
      return parseEpollTargets(fdinfo).some(
        (target) =>
          target.events & EPOLLIN &&
          ((target.dev === input.dev && target.ino === input.ino) || isInput(target.fd)),
      );
    }
  }
}

/** Whether a process's fd is the session's input (the same file, or /dev/tty while it is the controlling terminal). */
function fdIsInput(proc: ProcStat, fd: number, input: InputIdentity, reader: ProcReader): boolean {
  const file = reader.stat(`/proc/${proc.pid}/fd/${fd}`);
  if (!file) return false;
  if (file.dev === input.dev && file.ino === input.ino) return true;
  return input.rdev !== undefined && file.rdev === DEV_TTY_RDEV && proc.ttyNr === input.rdev;
}
