import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import type { ControlServer } from '@ux/control';
import type { UnifiedExec } from '@ux/unified-exec';
import type { McpStdioTransport } from './mcp-stdio-transport.js';

/** After its input ends, how long the server waits for the answers to requests it accepted. */
const ANSWER_WAIT_MS = 5000;

/** The end of `ux mcp`, for end of input and for signals alike. */
export interface McpShutdown {
  /** Starts the end once; every call returns the same promise. */
  drain(): Promise<void>;
  /** Set once the end started: nothing new starts, what was accepted is answered. */
  draining(): boolean;
}

/**
 * Refuse new calls, end the door (waiting calls answer at once, every process it started is ended),
 * close the control socket, answer whatever is still open (waiting a while for the answers already
 * on their way), close the server.
 */
export function createMcpShutdown(options: {
  /** The door's creation, if it started. */
  door(): Promise<UnifiedExec> | undefined;
  control: ControlServer | undefined;
  transport: McpStdioTransport;
  server: Server;
}): McpShutdown {
  const { control, transport, server } = options;
  let draining = false;
  let drained: Promise<void> | undefined;
  return {
    draining: () => draining,
    drain() {
      drained ??= (async () => {
        draining = true;
        const door = await options.door()?.catch(() => undefined);
        await door?.shutdown();
        await control?.close();
        const deadline = Date.now() + ANSWER_WAIT_MS;
        while (transport.pending.size > 0 && Date.now() < deadline)
          await new Promise((resolve) => setTimeout(resolve, 10));
        for (const id of [...transport.pending])
          await transport.reply(
            id,
            ErrorCode.InternalError,
            'the server is shutting down and could not answer this request',
          );
        await server.close();
        await control?.close();
      })();
      return drained;
    },
  };
}
