import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { UnifiedExec } from '@ux/unified-exec';
import packageJson from '../package.json' with { type: 'json' };
import { ApprovalInbox } from './approval-inbox.js';
import { clarifyInvalidParams } from './clarify-invalid-params.js';
import { findNotifier, notifyDesktop } from './desktop-notification.js';
import { createInboxReviewer } from './inbox-reviewer.js';
import type { Io } from './io.js';
import { serveCleanPrompt } from './mcp-clean-prompt.js';
import { createMcpDoorStarter } from './mcp-door-starter.js';
import { watchMcpPolicyText } from './mcp-policy-text-watch.js';
import { noSessionPolicyChanges } from './mcp-policy-words.js';
import type { ClientAnswer } from './mcp-reviewer.js';
import { createMcpShutdown } from './mcp-shutdown.js';
import { McpStdioTransport } from './mcp-stdio-transport.js';
import { OutgoingMessageTransport } from './outgoing-message-transport.js';
import { policyHelp } from './policy-options.js';
import {
  MCP_SANDBOX_MODES,
  prepareMcpSession,
  type ReadyMcpSession,
  serveMcpFailure,
} from './prepare-mcp-session.js';
import { serveApprovals } from './serve-approvals.js';
import { serveMcpInitialize } from './serve-mcp-initialize.js';
import { serveMcpTools } from './serve-mcp-tools.js';
import { serveSessions, startProcessControl } from './serve-sessions.js';
import { serveStartupError } from './serve-startup-error.js';

export const MCP_HELP = `Usage: ux mcp [options]

An MCP server over stdio exposing exactly two tools, exec_command and write_stdin. Approval questions
go where approvals_via (config.toml) says: by default to the client as elicitation requests when it
supports them, otherwise (or when the client refuses them itself, faster than a person could) to the
approvals inbox, where a person answers them with 'ux approvals' from any terminal; nothing that needs
approval runs without an answer (approval_timeout_s: how long a question waits). A cancelled call stops waiting and keeps its process; closing the server
ends every process. Calls that wait longer than a second report progress when the client asks for it.

The session's sandbox, network, environments and how to ask for more are told to the model in the
server's instructions and in exec_command's description, and kept true as the session changes (hosts
allowed for the session, approved prefixes: the tool list changes and the client is notified).

Whatever keeps it from serving (a mistake in these options or in config.toml, an unknown environment, a
feature plan without exec_command, a session that cannot start) is told to the client: every request,
initialize first, is answered with an error that names the problem and the fix; stderr says it too.

Options:
  --cwd DIR              the session directory (default the current one)
  --env NAME             where commands run when a call does not say: local, or a ux exec-server
                         configured as [environments.NAME] (default: default_environment, else local);
                         with several environments the model may choose per call (environment_id)
  --approval POLICY      untrusted, on-failure, on-request or never (default from config)
${policyHelp(MCP_SANDBOX_MODES)}  -h, --help             this help
`;

/**
 * `ux mcp`: prepare the session (arguments, configuration, tool plan), then serve it; whatever keeps
 * it from serving is told to the client in-band.
 */
export async function mcpCommand(args: string[], io: Io): Promise<number> {
  let prepared: ReturnType<typeof prepareMcpSession>;
  try {
    prepared = prepareMcpSession(args, io);
  } catch (error) {
    return serveMcpFailure(error, io);
  }
  if (prepared === 'help') {
    io.stdout(MCP_HELP);
    return 0;
  }
  if ('cannotServe' in prepared) return serveStartupError(prepared.cannotServe, io);
  return serveMcpSession(prepared, io);
}

/**
 * Serves one session over stdio until the input ends or a signal comes: the approvals inbox and the
 * control socket, the MCP server with its initialize, tools and prompt handlers, the door (built on
 * the client's initialize), and the shutdown. Resolves with the exit code.
 */
async function serveMcpSession({ session, policy, cwd }: ReadyMcpSession, io: Io): Promise<number> {
  const log = (text: string) => io.stderr(text);
  const servedTools: readonly string[] = session.toolPlan.tools;
  const approvalsVia = session.review.approvalsVia.value;
  // What changed during the session (hosts answered for it, approved prefixes), told to the model.
  const changes = noSessionPolicyChanges();
  const ruleFile = join(session.rulesDirectory, 'default.rules');
  // The approvals inbox, served on the control socket for `ux approvals` (see docs/control-plane.md).
  const inbox = new ApprovalInbox({ ruleFile });
  const notifier = findNotifier(io.env);
  if (notifier)
    inbox.onChange((event) => {
      if (event.type === 'added') notifyDesktop(notifier, event.approval);
    });
  const control = await startProcessControl('mcp', cwd, (message) => log(`ux mcp: warning: ${message}\n`));
  if (control) serveApprovals(control, inbox);
  // Calls whose question nobody answered in time: their model is told so (`nobodyAnswered`).
  const timedOut = new Map<string, number>();
  const inboxReviewer = createInboxReviewer(inbox, {
    timeoutSeconds: session.review.approvalTimeoutS.value,
    unreachable: () => (control ? undefined : 'this process has no control socket (see its warning)'),
    onTimeout: (callId, seconds) => timedOut.set(callId, seconds),
  });
  const clientRefusals = new Map<string, ClientAnswer>();

  const server = new Server(
    { name: 'ux', version: packageJson.version },
    {
      capabilities: {
        // The tool list changes when the policy does (exec_command's description tells it).
        tools: { listChanged: true },
        prompts: {},
        // With a network by domain, each connection through the proxy is logged to the client.
        ...(policy.network === 'proxied' ? { logging: {} } : {}),
      },
    },
  );
  const policyText = watchMcpPolicyText(server, {
    session,
    policy,
    cwd,
    platform: io.platform,
    changes,
    approvalsVia,
  });
  const door = createMcpDoorStarter({
    server,
    session,
    policy,
    cwd,
    io,
    approvalsVia,
    ruleFile,
    inboxReviewer,
    clientRefusals,
    changes,
    policyText,
    log,
  });
  // `ux ps` and `ux attach` reach this process's sessions through the same socket.
  if (control) serveSessions(control, (): UnifiedExec | undefined => door.current());
  serveMcpInitialize(server, { servedTools, control, ensureDoor: door.ensure, policyText });
  serveCleanPrompt(server, door.ensure);
  serveMcpTools(server, {
    servedTools,
    policy,
    remoteEnvironments: session.settings.environments.some((environment) => environment.kind !== 'local'),
    ensureDoor: door.ensure,
    policyText,
    draining: () => shutdown.draining(),
    clientRefusals,
    timedOut,
  });
  // Malformed input is answered by the transport; whatever else the SDK reports goes to the log.
  server.onerror = (error) => log(`ux mcp: ${error.message}\n`);

  const transport = new McpStdioTransport({
    input: process.stdin,
    output: process.stdout,
    onInputEnd: () => void shutdown.drain(),
  });
  const shutdown = createMcpShutdown({ door: door.creation, control, transport, server });
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(new OutgoingMessageTransport(transport, clarifyInvalidParams));

  const stop = () => void shutdown.drain();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('SIGHUP', stop);
  await closed;
  await shutdown.drain();
  process.off('SIGTERM', stop);
  process.off('SIGINT', stop);
  process.off('SIGHUP', stop);
  process.stdin.pause();
  return door.failed() ? 1 : 0;
}
