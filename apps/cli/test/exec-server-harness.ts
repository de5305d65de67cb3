// Starts the built `ux exec-server` on WebSocket for a test (stopped when the test ends), and reads
// which processes it hosts.
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { tempDir } from '@ux/test-utils';
import { onTestFinished } from 'vitest';
import { BIN } from './cli-harness.js';

export interface WsExecServer {
  url: string;
  port: number;
  token: string;
  child: ChildProcess;
  pid: number;
  /** Resolves when the server process has exited and its pipes closed. */
  closed: Promise<void>;
}

export interface WsExecServerOptions {
  /** Default 0: a free port, printed by the server. */
  port?: number;
  token?: string;
  /** Set in the server's environment (commands there inherit it), e.g. `{ WHERE: 'box' }`. */
  env?: Record<string, string>;
  /** More `ux exec-server` options, e.g. `['--on-disconnect', 'terminate']`. */
  args?: string[];
}

/**
 * `ux exec-server --listen ws://127.0.0.1:PORT --ws-token-file FILE …`, with its own HOME and UX_HOME,
 * resolved once it prints the URL it listens on. SIGTERMed (and awaited) when the test ends.
 */
export async function startWsExecServer(options: WsExecServerOptions = {}): Promise<WsExecServer> {
  const dir = tempDir('ux-ws-server-');
  const token = options.token ?? 'the-box-token';
  writeFileSync(join(dir, 'token'), `${token}\n`, { mode: 0o600 });
  const child = spawn(
    process.execPath,
    [
      BIN,
      'exec-server',
      '--listen',
      `ws://127.0.0.1:${options.port ?? 0}`,
      '--ws-token-file',
      join(dir, 'token'),
      ...(options.args ?? []),
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, UX_HOME: dir, ...options.env },
    },
  );
  const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await closed;
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    stderr += text;
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    child.stdout!.setEncoding('utf8').on('data', (text: string) => {
      seen += text;
      const match = /^(ws:\/\/\S+)\n/.exec(seen);
      if (match) resolve(match[1]!);
    });
    void closed.then(() => reject(new Error(`ux exec-server exited before listening: ${stderr}`)));
  });
  return { url, port: Number(new URL(url).port), token, child, pid: child.pid!, closed };
}

/** A loopback port that was free a moment ago: opened, then closed, so nothing listens on it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Live (non-zombie) descendants of `pid`, as "pid command" lines. */
export function descendantsOf(pid: number): string[] {
  const children = new Map<number, number[]>();
  const commands = new Map<number, string>();
  for (const name of readdirSync('/proc')) {
    const child = Number(name);
    if (!Number.isInteger(child)) continue;
    try {
      const stat = readFileSync(`/proc/${child}/stat`, 'utf8');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z') continue;
      commands.set(child, readFileSync(`/proc/${child}/cmdline`, 'utf8').split('\0').join(' ').trim());
      const siblings = children.get(Number(ppid)) ?? [];
      siblings.push(child);
      children.set(Number(ppid), siblings);
    } catch {
      // It ended while we looked.
    }
  }
  const found: string[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length > 0) {
    const next = queue.shift()!;
    if (commands.has(next)) found.push(`${next} ${commands.get(next)}`);
    queue.push(...(children.get(next) ?? []));
  }
  return found.sort();
}
