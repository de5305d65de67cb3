import type { ControlHello } from '@ux/control';
import { readableText } from '@ux/protocol-utils';
import { formatElapsed } from './attach-session.js';
import { displayCommand } from './display-command.js';
import { UsageError } from './usage-error.js';

/** One session as `sessions.list` answers it (docs/control-plane.md). */
export interface ControlSession {
  id: number;
  /** The argv it runs. */
  command: string[];
  cwd: string;
  /** A terminal (keys go to it) or pipes (only Ctrl-C reaches it). */
  tty: boolean;
  /** `local`, or the remote environment it runs in. */
  environment: string;
  /** The sandbox backend, or `none`. */
  sandbox: string;
  state: 'running' | 'exited';
  exitCode?: number;
  /** Its foreground process is blocked reading its terminal or stdin (where the platform tells). */
  waitingForInput?: boolean;
  /** Milliseconds since the epoch. */
  startedAt: number;
  /** Milliseconds since it last printed (since it started, when it never did). */
  idleMs: number;
  /** Its latest output's last lines. */
  lastLines: string[];
  /** The last of them has no newline yet (a prompt waiting on its line). */
  lastLineOpen?: boolean;
}

/** A ux process and its sessions, as `ux ps --json` lists them. */
export interface PsProcess extends ControlHello {
  sessions: ControlSession[];
  /** Why its sessions could not be listed (it went away meanwhile). */
  error?: string;
}

/** `PID:SESSION` or `SESSION`, as `ux attach` and `ux kill` take it. */
export interface SessionTarget {
  pid?: number;
  session: number;
}

export function parseSessionTarget(text: string | undefined, command: 'attach' | 'kill'): SessionTarget {
  const usage = `usage: ux ${command} PID:SESSION (or SESSION when only one process has it; ux ps lists them)`;
  if (text === undefined) throw new UsageError(`missing the session; ${usage}`, `ux ${command} --help`);
  const match = /^(?:([1-9]\d{0,9}):)?([1-9]\d{0,9})$/.exec(text);
  if (!match)
    throw new UsageError(`"${readableText(text)}" is not a session; ${usage}`, `ux ${command} --help`);
  return { ...(match[1] === undefined ? {} : { pid: Number(match[1]) }), session: Number(match[2]) };
}

/**
 * The one process a target names: by its pid, or the only one with that session. Throws a message
 * naming the candidates when there are none or several.
 */
export function resolveSessionTarget(target: SessionTarget, processes: readonly PsProcess[]): PsProcess {
  const named = `${target.pid === undefined ? '' : `${target.pid}:`}${target.session}`;
  const all = processes
    .flatMap((process) => process.sessions.map((session) => `${process.pid}:${session.id}`))
    .join(', ');
  const known = all === '' ? 'no ux process has a session now' : `the sessions are ${all}`;
  if (target.pid !== undefined) {
    const process = processes.find((candidate) => candidate.pid === target.pid);
    if (!process) throw new Error(`no ux process ${target.pid} serves a control socket; ${known}`);
    if (!process.sessions.some((session) => session.id === target.session))
      throw new Error(`ux process ${target.pid} has no session ${target.session}; ${known}`);
    return process;
  }
  const holders = processes.filter((process) => process.sessions.some((s) => s.id === target.session));
  if (holders.length === 1 && holders[0]) return holders[0];
  if (holders.length === 0) throw new Error(`no ux process has a session ${named}; ${known}`);
  throw new Error(
    `session ${named} is ambiguous: ${holders.map((process) => `${process.pid}:${target.session} (${process.kind}${process.clientName ? ` ${readableText(process.clientName)}` : ''})`).join(', ')}; name one as PID:SESSION`,
  );
}

/** What `ux ps` prints for people: each process, then its sessions, idle time and last lines. */
export function renderPs(processes: readonly PsProcess[], now = Date.now()): string {
  if (processes.length === 0)
    return 'no ux process is running (ux mcp, ux exec and ux exec-server are listed)\n';
  const out: string[] = [];
  for (const process of processes) {
    const client = process.clientName ? ` ${readableText(process.clientName)}` : '';
    out.push(
      `${process.pid}  ux ${process.kind}${client}  started ${formatElapsed(Math.max(0, now - process.startedAt))} ago  ${readableText(process.cwd)}`,
    );
    if (process.error) out.push(`  (${readableText(process.error)})`);
    else if (process.sessions.length === 0) out.push('  no sessions');
    for (const session of process.sessions) {
      out.push(
        `  ${process.pid}:${session.id}  ${sessionState(session)}  idle ${formatElapsed(session.idleMs)}  ${session.tty ? 'tty' : 'pipe'}  ${session.environment}  sandbox ${session.sandbox}  ${readableText(commandText(session.command))}`,
      );
      for (const line of session.lastLines)
        out.push(`      | ${readableText(withoutTerminalSequences(line))}`);
    }
  }
  return `${out.join('\n')}\n`;
}

/** running, waiting for input, exited with code N. */
export function sessionState(
  session: Pick<ControlSession, 'state' | 'exitCode' | 'waitingForInput'>,
): string {
  if (session.state === 'exited') return `exited with code ${session.exitCode ?? '?'}`;
  return session.waitingForInput ? 'waiting for input' : 'running';
}

/** The command as the model gave it: the shell's `-c` script, else the argv. */
export function commandText(argv: readonly string[]): string {
  const flag = argv.findIndex((word) => /^-[a-z]*c$/.test(word));
  if (flag >= 1 && flag === argv.length - 2) return argv[argv.length - 1] ?? '';
  return displayCommand([...argv]);
}

/**
 * A line of terminal output without its colour and cursor sequences (CSI, OSC): `ux ps` shows the
 * text; whatever control character is left is shown escaped.
 */
export function withoutTerminalSequences(line: string): string {
  return line
    .replace(/\u001b\[[0-?]*[ -/]*[@-~]/g, '')
    .replace(/\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g, '');
}
