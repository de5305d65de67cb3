import { join } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  type InitializeRequest,
  InitializeRequestSchema,
  type InitializeResult,
  type JSONRPCMessage,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import {
  type ApprovalPolicy,
  ConfigError,
  type EffectivePolicy,
  type ExecResult,
  NoReviewerError,
  REVIEWER_SPECIFICATION_VERSION,
  type Reviewer,
  sandboxModes,
  simpleApprovalPolicies,
  UxError,
} from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import { REFUSAL_NEXT_STEPS, renderNotRun, renderResultText, type UnifiedExec } from '@ux/unified-exec';
import packageJson from '../package.json' with { type: 'json' };
import { ApprovalInbox } from './approval-inbox.js';
import type { CliSession } from './cli-session.js';
import { createCliDoor } from './create-cli-door.js';
import { findNotifier, notifyDesktop } from './desktop-notification.js';
import { approvalRoute, clientThenInboxReviewer, createInboxReviewer } from './inbox-reviewer.js';
import type { Io } from './io.js';
import { serveCleanPrompt } from './mcp-clean-prompt.js';
import {
  type McpPolicyContext,
  mcpInstructions,
  mcpListedTool,
  mcpPolicyText,
  mcpToolAnnotations,
  noSessionPolicyChanges,
  recordSessionPolicyChange,
  someoneCanAnswer,
} from './mcp-policy-words.js';
import {
  CLIENT_AUTOMATIC_ANSWER_MS,
  type ClientAnswer,
  createElicitationReviewer,
  pausingReviewer,
} from './mcp-reviewer.js';
import { McpStdioTransport } from './mcp-stdio-transport.js';
import { missingToolsReason } from './missing-tools-reason.js';
import { oneOf, parseOptions } from './parse-options.js';
import {
  loadPolicySession,
  POLICY_OPTIONS,
  policyFlags,
  policyHelp,
  sessionDirectory,
  sessionPolicy,
} from './policy-options.js';
import { serveApprovals } from './serve-approvals.js';
import { serveSessions, startProcessControl } from './serve-sessions.js';
import { serveStartupError } from './serve-startup-error.js';
import { UsageError } from './usage-error.js';

const MCP_SANDBOX_MODES = sandboxModes.filter((mode) => mode !== 'external-sandbox');

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

const HELP_COMMAND = 'ux mcp --help';
const PROGRESS_INTERVAL_MS = 1000;
/** After its input ends, how long the server waits for the answers to requests it accepted. */
const ANSWER_WAIT_MS = 5000;

export async function mcpCommand(args: string[], io: Io): Promise<number> {
  let prepared: PreparedSession | 'help';
  try {
    prepared = prepareSession(args, io);
  } catch (error) {
    return serveFailure(error, io);
  }
  if (prepared === 'help') {
    io.stdout(MCP_HELP);
    return 0;
  }
  if ('cannotServe' in prepared) return serveStartupError(prepared.cannotServe, io);
  return serveSession(prepared, io);
}

interface ReadySession {
  session: CliSession;
  policy: EffectivePolicy;
  cwd: string;
}
type PreparedSession = ReadySession | { cannotServe: string };

/**
 * Arguments, configuration and the tool plan: everything `ux mcp` checks before it serves. Throws what
 * keeps it from serving; `serveFailure` tells the client.
 */
function prepareSession(args: string[], io: Io): PreparedSession | 'help' {
  const { values, positionals } = parseOptions(
    args,
    {
      cwd: { type: 'string' },
      env: { type: 'string' },
      approval: { type: 'string' },
      ...POLICY_OPTIONS,
      help: { type: 'boolean', short: 'h' },
    },
    HELP_COMMAND,
  );
  if (values.help) return 'help';
  if (positionals.length > 0) throw new UsageError(`unexpected argument "${positionals[0]}"`, HELP_COMMAND);
  const approvalPolicy: ApprovalPolicy | undefined =
    values.approval === undefined
      ? undefined
      : oneOf(values.approval, simpleApprovalPolicies, '--approval', HELP_COMMAND);
  const cwd = sessionDirectory(values.cwd, HELP_COMMAND);
  const flags = policyFlags(values, {
    cwd,
    env: io.env,
    helpCommand: HELP_COMMAND,
    modes: MCP_SANDBOX_MODES,
  });
  const session = loadPolicySession(
    io,
    { ...flags, approvalPolicy, ...(values.env === undefined ? {} : { environment: values.env }) },
    HELP_COMMAND,
  );
  const policy = sessionPolicy(session, flags, { cwd, env: io.env, helpCommand: HELP_COMMAND });
  for (const warning of session.warnings) io.stderr(`ux mcp: warning: ${warning}\n`);
  // The plan's tools: exec_command and write_stdin, or shell_command (the zsh fork's standalone tool).
  const notOffered =
    session.toolPlan.tools.length === 0
      ? missingToolsReason(session, ['exec_command', 'write_stdin'])
      : undefined;
  if (notOffered) return { cannotServe: notOffered };
  if (session.toolPlan.zshForkUnavailable !== undefined)
    return { cannotServe: `the zsh fork cannot start: ${session.toolPlan.zshForkUnavailable}` };
  return { session, policy, cwd };
}

/**
 * A start-up failure, told the way a client can show it: in-band (every request answered with it) and
 * on stderr, with main's exit codes (2 for a usage mistake, 1 otherwise). A mistake in the arguments
 * is the client configuration's, so the fix says where to make it. An unexpected error is told too.
 */
function serveFailure(error: unknown, io: Io): Promise<number> {
  if (UsageError.isInstance(error))
    return serveStartupError(
      `${error.message}. These arguments come from the MCP client's configuration of this server: correct them there ('${error.helpCommand}' lists the options)`,
      io,
      { exitCode: 2, stderr: `ux: ${error.message}\nRun '${error.helpCommand}' for usage.\n` },
    );
  if (ConfigError.isInstance(error)) return serveStartupError(error.message, io);
  if (UxError.isInstance(error) && error.code === 'invalid_arguments')
    return serveStartupError(
      `${error.message}. These arguments come from the MCP client's configuration of this server: correct them there ('${HELP_COMMAND}' lists the options)`,
      io,
      { exitCode: 2, stderr: `ux: ${error.message}\n` },
    );
  const message = error instanceof Error ? error.message : String(error);
  return serveStartupError(`the session could not start: ${message}`, io);
}

async function serveSession({ session, policy, cwd }: ReadySession, io: Io): Promise<number> {
  const servedTools: readonly string[] = session.toolPlan.tools;
  // What changed during the session (hosts answered for it, approved prefixes), told to the model.
  const changes = noSessionPolicyChanges();
  const via = session.review.approvalsVia.value;
  // Whether a person can be asked: through the client's elicitation, or the inbox (`approvals_via`).
  const policyContext = (canElicit: boolean): McpPolicyContext => ({
    session,
    policy,
    cwd,
    canElicit: approvalRoute(via, canElicit) !== 'nobody',
    platform: io.platform,
    changes,
  });
  const ruleFile = join(session.rulesDirectory, 'default.rules');
  // The approvals inbox, served on the control socket for `ux approvals` (see docs/control-plane.md).
  const inbox = new ApprovalInbox({ ruleFile });
  const notifier = findNotifier(io.env);
  if (notifier)
    inbox.onChange((event) => {
      if (event.type === 'added') notifyDesktop(notifier, event.approval);
    });
  const control = await startProcessControl('mcp', cwd, (message) =>
    io.stderr(`ux mcp: warning: ${message}\n`),
  );
  if (control) serveApprovals(control, inbox);
  // `ux ps` and `ux attach` reach this process's sessions through the same socket.
  let controlDoor: UnifiedExec | undefined;
  if (control) serveSessions(control, () => controlDoor);
  // Calls whose question nobody answered in time: their model is told so (`timedOutNextStep`).
  const timedOut = new Map<string, number>();
  const inboxReviewer = createInboxReviewer(inbox, {
    timeoutSeconds: session.review.approvalTimeoutS.value,
    unreachable: () => (control ? undefined : 'this process has no control socket (see its warning)'),
    onTimeout: (callId, seconds) => timedOut.set(callId, seconds),
  });
  const remoteEnvironments = session.settings.environments.some(
    (environment) => environment.kind !== 'local',
  );

  const server = new Server(
    { name: 'ux', version: packageJson.version },
    {
      // With a network by domain, each connection through the proxy is logged to the client.
      capabilities: {
        // The tool list changes when the policy does (exec_command's description tells it).
        tools: { listChanged: true },
        prompts: {},
        ...(policy.network === 'proxied' ? { logging: {} } : {}),
      },
    },
  );
  // The instructions tell the policy, and who is asked depends on the client's elicitation: they are
  // written when its `initialize` comes. The SDK's own answer is kept (versions, capabilities).
  const sdkInitialize = (
    server as unknown as { _oninitialize(request: InitializeRequest): Promise<InitializeResult> }
  )._oninitialize.bind(server);
  server.setRequestHandler(InitializeRequestSchema, async (request) => {
    const answer = await sdkInitialize(request);
    const client = request.params.clientInfo;
    if (client?.name)
      control?.setInfo({ clientName: client.version ? `${client.name} ${client.version}` : client.name });
    // The session starts now, so that one that cannot start is told in this answer (and every later one).
    await ensureDoor();
    const canElicit = Boolean(request.params.capabilities.elicitation);
    return { ...answer, instructions: mcpInstructions(servedTools, mcpPolicyText(policyContext(canElicit))) };
  });
  const log = (text: string) => io.stderr(text);
  // Set once the input has ended or a signal came: nothing new starts, what was accepted is answered.
  let draining = false;
  let drained: Promise<void> | undefined;
  const transport = new McpStdioTransport({
    input: process.stdin,
    output: process.stdout,
    onInputEnd: () => void drain(),
  });

  // The door is built once the client has said what it can do (its `initialize`, which waits for it):
  // elicitation decides who approves. A request before that is refused, never held. A door that cannot
  // be built is told to every request, and ux mcp exits 1 when its input ends.
  let doorCreation: Promise<UnifiedExec> | undefined;
  let startFailed = false;
  const ensureDoor = (): Promise<UnifiedExec> => {
    if (doorCreation) return doorCreation;
    const capabilities = server.getClientCapabilities();
    if (!capabilities)
      return Promise.reject(
        new McpError(ErrorCode.InvalidRequest, 'the server is not initialized: send initialize first'),
      );
    const canAsk = Boolean(capabilities.elicitation);
    const route = approvalRoute(via, canAsk);
    // With client-then-inbox, an automatic refusal by the client sends the question to the inbox.
    const inboxAfterClient = route === 'client' && via === 'client-then-inbox';
    // False once the client has shown that it answers approval questions itself (and no inbox follows).
    let personReachable = route !== 'nobody';
    // Set once the door exists; a question can only come from a command the door started.
    let setPaused: (paused: boolean) => void = () => {};
    const elicitation = (): Reviewer =>
      createElicitationReviewer(server, log, { ruleFile }, (callId, answer) => {
        clientRefusals.set(callId, answer);
        // The client answers for itself: with no inbox after it, the model is told nobody can be
        // asked, and denials stop offering escalation.
        if (
          !inboxAfterClient &&
          answer.ms < CLIENT_AUTOMATIC_ANSWER_MS &&
          recordSessionPolicyChange(changes, { kind: 'client_answers_itself', ...answer })
        ) {
          personReachable = false;
          policyChanged(canAsk);
        }
      });
    // The client's automatic refusal of this call's question, taken back: the inbox answers instead.
    const automaticRefusal = (callId: string): boolean => {
      const answer = clientRefusals.get(callId);
      if (answer === undefined || answer.ms >= CLIENT_AUTOMATIC_ANSWER_MS) return false;
      clientRefusals.delete(callId);
      return true;
    };
    const reviewer: Reviewer =
      route === 'nobody'
        ? {
            specificationVersion: REVIEWER_SPECIFICATION_VERSION,
            id: 'mcp-no-elicitation',
            review: async (request) => {
              log(
                `ux mcp: \`${readableText(request.display_command ?? request.command.join(' '))}\` needs approval and the client cannot be asked: refused\n`,
              );
              throw new NoReviewerError(
                'the MCP client does not support elicitation and approvals_via is "client"; approve with a client that does, set approvals_via = "client-then-inbox" to answer with `ux approvals`, or start ux mcp with --approval / --sandbox so that none is needed',
              );
            },
          }
        : pausingReviewer(
            route === 'inbox'
              ? inboxReviewer
              : inboxAfterClient
                ? clientThenInboxReviewer(elicitation(), inboxReviewer, automaticRefusal, (why) =>
                    log(`ux mcp: ${why}; approval questions go to the approvals inbox (ux approvals)\n`),
                  )
                : elicitation(),
            (paused) => setPaused(paused),
          );
    if (route === 'nobody')
      log('ux mcp: the client cannot answer elicitation requests; commands that need approval are refused\n');
    else if (route === 'inbox')
      log(
        `ux mcp: approval questions go to the approvals inbox: answer them with \`ux approvals\` (approvals_via = "${via}", ${session.review.approvalsVia.source})\n`,
      );
    doorCreation = createCliDoor(session, {
      policy,
      cwd,
      env: io.env,
      platform: io.platform,
      reviewer,
      reviewerCanAsk: () => someoneCanAnswer(session, personReachable),
      onWarning: (message) => log(`ux mcp: warning: ${readableText(message)}\n`),
      checkSandboxAtStart: true,
      onPolicyChange: (change) => {
        if (recordSessionPolicyChange(changes, change)) policyChanged(canAsk);
      },
    }).catch((error: unknown) => {
      // Told in-band: every request that needs the door is answered with it.
      startFailed = true;
      throw new Error(
        `ux mcp cannot serve: the session could not start: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    // Each exchange through the session's network proxy, as an MCP log message (logger `ux.network`):
    // `info` when it went through, `warning` when it was refused.
    void doorCreation.then(
      (door) => {
        controlDoor = door;
        setPaused = (paused) => door.setPaused(paused);
        return door.onEvent((event) => {
          if (event.type !== 'network_access') return;
          const refused = event.decision === 'denied' || event.decision === 'asked_denied';
          void server
            .sendLoggingMessage({ level: refused ? 'warning' : 'info', logger: 'ux.network', data: event })
            .catch(() => undefined);
        });
      },
      () => undefined,
    );
    doorCreation.catch((error: unknown) => {
      log(`${error instanceof Error ? error.message : String(error)}\n`);
    });
    return doorCreation;
  };
  serveCleanPrompt(server, () => ensureDoor());
  // The policy text of the last tools/list answer: when the policy changes the text, the client is told
  // the list changed, so it lists the tools again and the model reads the new text.
  let listedPolicyText: string | undefined;
  const policyChanged = (canElicit: boolean) => {
    if (listedPolicyText === undefined || listedPolicyText === mcpPolicyText(policyContext(canElicit)))
      return;
    void server.sendToolListChanged().catch(() => undefined);
  };
  server.setRequestHandler(ListToolsRequestSchema, async () => {
    const served = (await ensureDoor()).tools.filter((tool) => servedTools.includes(tool.name));
    const policyText = mcpPolicyText(policyContext(Boolean(server.getClientCapabilities()?.elicitation)));
    listedPolicyText = policyText;
    return {
      tools: served.map((tool) =>
        mcpListedTool(tool, policyText, mcpToolAnnotations(tool.name, policy, remoteEnvironments)),
      ),
    };
  });

  const notRun = (startedAt: number): CallToolResult =>
    toolResult(
      false,
      renderNotRun({
        status: 'failed',
        wallTimeMs: Date.now() - startedAt,
        error: {
          code: 'server_shutting_down',
          message: 'not run: the server is shutting down (its input ended); nothing was started',
        },
      }),
    );
  // The MCP client's own refusals of approval questions, by call id: a refusal of a person's is told
  // apart from the client's automatic answer (see `CLIENT_AUTOMATIC_ANSWER_MS`).
  const clientRefusals = new Map<string, ClientAnswer>();
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    // The call's wall time counts from here: before the door exists, approvals and sandbox set-up.
    const startedAt = Date.now();
    const { name, arguments: toolArgs } = request.params;
    if (!servedTools.includes(name))
      return toolResult(
        false,
        renderNotRun({
          status: 'failed',
          wallTimeMs: Date.now() - startedAt,
          error: {
            code: 'unknown_tool',
            message: `unknown tool "${name}"; this server has ${servedTools.join(' and ')}`,
          },
          nextStep: `Call ${servedTools.join(' or ')}.`,
        }),
      );
    if (draining) return notRun(startedAt);
    const active = await ensureDoor();
    if (draining) return notRun(startedAt);
    const progressToken = request.params._meta?.progressToken;
    const ticker =
      progressToken === undefined
        ? undefined
        : setInterval(() => {
            const seconds = Math.round((Date.now() - startedAt) / 1000);
            void extra
              .sendNotification({
                method: 'notifications/progress',
                params: {
                  progressToken,
                  progress: seconds,
                  message: `${name} waiting for output (${seconds}s)`,
                },
              })
              .catch(() => undefined);
          }, PROGRESS_INTERVAL_MS);
    const callId = `mcp-${String(extra.requestId)}`;
    try {
      const response = await active.call(name, toolArgs ?? {}, { callId, signal: extra.signal, startedAt });
      // Every answer carries the structured result, errors and refusals included: Codex and Claude Code
      // show the model that, not the text; Gemini shows the text. Both say the same.
      const result = nobodyAnswered(
        byWhom(response.result, clientRefusals.get(callId)),
        timedOut.get(callId),
      );
      return toolResult(response.success, result, result === response.result ? response.text : undefined);
    } finally {
      timedOut.delete(callId);
      clientRefusals.delete(callId);
      if (ticker) clearInterval(ticker);
    }
  });

  // Malformed input is answered by the transport; whatever else the SDK reports goes to the log.
  server.onerror = (error) => log(`ux mcp: ${error.message}\n`);

  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
  });
  await server.connect(transport);
  // The SDK answers a request whose params fail its schema with -32603 and a dump of the schema issues;
  // JSON-RPC calls that "invalid params" (-32602), and a person should read one line.
  const send = transport.send.bind(transport);
  transport.send = (message: JSONRPCMessage) => send(clarifyInvalidParams(message));

  /**
   * The end, for end of input and for signals alike: refuse new calls, end the door (waiting calls
   * answer at once, every process it started is ended), answer whatever is still open, close.
   */
  function drain(): Promise<void> {
    drained ??= (async () => {
      draining = true;
      const door = await doorCreation?.catch(() => undefined);
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
  }
  const stop = () => void drain();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  process.once('SIGHUP', stop);
  await closed;
  await drain();
  process.off('SIGTERM', stop);
  process.off('SIGINT', stop);
  process.off('SIGHUP', stop);
  process.stdin.pause();
  return startFailed ? 1 : 0;
}

function clarifyInvalidParams(message: JSONRPCMessage): JSONRPCMessage {
  if (!('error' in message) || message.error.code !== -32603) return message;
  let issues: unknown;
  try {
    issues = JSON.parse(message.error.message);
  } catch {
    return message;
  }
  if (!Array.isArray(issues) || issues.length === 0) return message;
  const described = issues.map(
    (issue: { path?: unknown[]; message?: string }) =>
      `${(issue.path ?? []).join('.') || '(root)'}: ${issue.message ?? 'invalid'}`,
  );
  return { ...message, error: { code: -32602, message: `Invalid params: ${described.join('; ')}` } };
}

/** The MCP answer of a result: its text, and the result itself as `structuredContent`. */
function toolResult(success: boolean, result: ExecResult, text = renderResultText(result)): CallToolResult {
  return {
    content: [{ type: 'text', text }],
    structuredContent: result,
    ...(success ? {} : { isError: true }),
  };
}

/**
 * A refusal because nobody answered the inbox's question within `approval_timeout_s`: the next step
 * says that a person may be away (not that nobody can ever be asked).
 */
function nobodyAnswered(result: ExecResult, seconds: number | undefined): ExecResult {
  if (seconds === undefined || result.status !== 'refused' || result.refusal?.decided_by !== 'nobody')
    return result;
  return {
    ...result,
    next_step: `Nobody answered the approval question within ${seconds} s (approval_timeout_s): the person may be away. Do not ask again at once; continue with what runs without approval, or tell the person that this command waits for their answer (they answer with \`ux approvals\`).`,
  };
}

/**
 * A refusal the orchestrator put down to a person, when the client's `decline` or `cancel` came too
 * fast for anyone to have read the question: the client's automatic answer (`codex exec` declines
 * every elicitation, `claude -p` cancels), said so.
 */
function byWhom(result: ExecResult, answer: ClientAnswer | undefined): ExecResult {
  if (
    result.status !== 'refused' ||
    result.refusal?.decided_by !== 'person' ||
    answer === undefined ||
    answer.ms >= CLIENT_AUTOMATIC_ANSWER_MS
  )
    return result;
  return {
    ...result,
    refusal: {
      decided_by: 'client',
      reason: `the MCP client answered the approval question with "${answer.action}" after ${answer.ms} ms, too soon for a person to have read it: its automatic answer`,
    },
    next_step: REFUSAL_NEXT_STEPS.client,
  };
}
