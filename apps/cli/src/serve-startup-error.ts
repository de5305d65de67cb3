import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Io } from './io.js';
import { McpStdioTransport } from './mcp-stdio-transport.js';

export interface StartupErrorOptions {
  /** Default 1; 2 for a mistake in the arguments, as `ux` exits for one elsewhere. */
  exitCode?: number;
  /** What stderr says; default the message the client gets. */
  stderr?: string;
}

/**
 * `ux mcp` when something keeps it from serving (its arguments, a broken config.toml, an unknown
 * environment, a feature plan without exec_command, a session that cannot start): a client launched it
 * and reads only the wire, where a server that just exits shows as "Connection closed". So every
 * request, `initialize` first, is answered with a JSON-RPC error carrying the reason and its fix, until
 * the input ends. Stderr says it too. A person who typed `ux mcp …` at a terminal (its input is one)
 * gets stderr only, at once. Resolves with the exit code.
 */
export async function serveStartupError(
  reason: string,
  io: Io,
  options: StartupErrorOptions = {},
): Promise<number> {
  const message = `ux mcp cannot serve: ${reason}`;
  io.stderr(options.stderr ?? `${message}\n`);
  const exitCode = options.exitCode ?? 1;
  if (process.stdin.isTTY) return exitCode;
  const ended = new Promise<void>((resolve) => {
    const transport = new McpStdioTransport({
      input: process.stdin,
      output: process.stdout,
      onInputEnd: () => {
        void transport.close().then(resolve);
      },
    });
    transport.onmessage = (request) => {
      if ('method' in request && 'id' in request)
        void transport.reply(request.id, ErrorCode.InternalError, message);
    };
    void transport.start();
  });
  await ended;
  return exitCode;
}
