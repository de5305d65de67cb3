import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { Io } from './io.js';
import { McpStdioTransport } from './mcp-stdio-transport.js';

/**
 * `ux mcp` when the configuration keeps it from serving (a broken config.toml, a feature plan without
 * exec_command): a client launched it and reads only the wire, so every request, `initialize` first, is
 * answered with a JSON-RPC error carrying the reason (file:line:column), until the input ends. Stderr
 * says it too. Resolves with exit code 1.
 */
export async function serveStartupError(reason: string, io: Io): Promise<number> {
  const message = `ux mcp cannot serve: ${reason}`;
  io.stderr(`${message}\n`);
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
  return 1;
}
