import { spawn } from 'node:child_process';
import { LineSplitter } from '@ux/protocol-utils';
import { ExecServerConnectionError } from './exec-server-connection-error.js';
import { type ExecServerTransport, TransportEvents } from './exec-server-transport.js';

export interface StdioExecServerOptions {
  /** The program that runs the server: `ux`, `ssh`, `kubectl`, or `node` with a script. */
  command: string;
  /** `['exec-server', '--listen', 'stdio']`, `['box', 'ux', 'exec-server', '--listen', 'stdio']`, … */
  args?: readonly string[];
  /** The server's environment; default this process's. */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Receives the server's stderr (its logs); the last 2 KiB also go into error messages. */
  onStderr?: (text: string) => void;
  /** Longest line accepted from the server; default 64 MiB. A longer one ends the connection. */
  maxMessageBytes?: number;
  /** How long `close()` waits for the server to exit after its stdin closed, before SIGKILL. Default 5000. */
  closeTimeoutMs?: number;
}

const STDERR_TAIL_BYTES = 2048;

/**
 * Starts an exec-server as a child process and speaks to it over its stdin/stdout, one JSON message per
 * line. This covers a local `ux exec-server --listen stdio`, and remote ones reached through a command
 * that relays stdio (`ssh host ux exec-server --listen stdio`, `kubectl exec -i pod -- …`). Closing
 * the transport closes the server's stdin, which stops it and every process it hosts.
 */
export async function spawnStdioExecServer(options: StdioExecServerOptions): Promise<ExecServerTransport> {
  const args = options.args ?? [];
  const description = [options.command, ...args].join(' ');
  const child = spawn(options.command, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: options.env ?? process.env,
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (error) =>
      reject(
        new ExecServerConnectionError(
          'connect',
          `cannot start the exec-server \`${description}\`: ${error.message}`,
          {
            cause: error,
          },
        ),
      ),
    );
  });
  const events = new TransportEvents();
  let stderrTail = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    stderrTail = (stderrTail + text).slice(-STDERR_TAIL_BYTES);
    options.onStderr?.(text);
  });
  const maxMessageBytes = options.maxMessageBytes ?? 64 * 1024 * 1024;
  const splitter = new LineSplitter(
    maxMessageBytes,
    (line) => events.message(line),
    () => {
      events.close(`the exec-server sent a message longer than ${maxMessageBytes} bytes`);
      child.stdin.destroy();
    },
  );
  child.stdout.on('data', (data: Buffer) => splitter.push(data));
  // Writing to a server that died fails with EPIPE; its exit reports why.
  child.stdin.on('error', () => {});
  const exited = new Promise<void>((resolve) => {
    child.once('close', (code, signal) => {
      const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const tail = stderrTail.trim();
      events.close(
        `the exec-server \`${description}\` ${how}${tail ? `: ${tail.split('\n').slice(-3).join(' | ')}` : ''}`,
      );
      resolve();
    });
  });
  return {
    description,
    send(message) {
      if (!events.closed && child.stdin.writable) child.stdin.write(`${message}\n`);
    },
    onMessage: (listener) => events.onMessage(listener),
    onClose: (listener) => events.onClose(listener),
    async close() {
      child.stdin.end();
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        exited,
        new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            child.kill('SIGKILL');
            resolve();
          }, options.closeTimeoutMs ?? 5_000);
        }),
      ]);
      clearTimeout(timer);
      await exited;
    },
  };
}
