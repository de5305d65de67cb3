import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  type InitializeRequest,
  InitializeRequestSchema,
  type InitializeResult,
} from '@modelcontextprotocol/sdk/types.js';
import type { ControlServer } from '@ux/control';
import type { McpPolicyTextWatch } from './mcp-policy-text-watch.js';
import { mcpInstructions } from './mcp-policy-words.js';

/**
 * The `initialize` answer of `ux mcp`: the SDK's own (versions, capabilities), with instructions that
 * tell the policy. Who is asked depends on the client's elicitation, so they are written when its
 * `initialize` comes. The session (the door) starts here too, so that one that cannot start is told in
 * this answer and every later one; the client's name goes to `ux ps`.
 */
export function serveMcpInitialize(
  server: Server,
  options: {
    servedTools: readonly string[];
    control: ControlServer | undefined;
    ensureDoor(): Promise<unknown>;
    policyText: McpPolicyTextWatch;
  },
): void {
  const sdkAnswer = sdkInitializeAnswer(server);
  server.setRequestHandler(InitializeRequestSchema, async (request) => {
    const answer = await sdkAnswer(request);
    const client = request.params.clientInfo;
    if (client?.name)
      options.control?.setInfo({
        clientName: client.version ? `${client.name} ${client.version}` : client.name,
      });
    await options.ensureDoor();
    const canElicit = Boolean(request.params.capabilities.elicitation);
    return {
      ...answer,
      instructions: mcpInstructions(options.servedTools, options.policyText.text(canElicit)),
    };
  });
}

/**
 * The SDK's default `initialize` handler (`Server._oninitialize`), which negotiates the protocol
 * version and records the client's capabilities for `getClientCapabilities`. The SDK has no public
 * way to set the instructions per client, nor to reach its handler once replaced, so this is the one
 * place ux uses an SDK internal; the MCP integration tests fail if it moves.
 */
function sdkInitializeAnswer(server: Server): (request: InitializeRequest) => Promise<InitializeResult> {
  const internal = server as unknown as {
    _oninitialize(request: InitializeRequest): Promise<InitializeResult>;
  };
  return internal._oninitialize.bind(server);
}
