import {
  type ApprovalPolicy,
  ConfigError,
  type EffectivePolicy,
  sandboxModes,
  simpleApprovalPolicies,
  UxError,
} from '@ux/protocol/core';
import type { CliSession } from './cli-session.js';
import type { Io } from './io.js';
import { missingToolsReason } from './missing-tools-reason.js';
import { oneOf, parseOptions } from './parse-options.js';
import {
  loadPolicySession,
  POLICY_OPTIONS,
  policyFlags,
  sessionDirectory,
  sessionPolicy,
} from './policy-options.js';
import { serveStartupError } from './serve-startup-error.js';
import { UsageError } from './usage-error.js';

export const MCP_HELP_COMMAND = 'ux mcp --help';
/** `external-sandbox` is for a host that sandboxes ux itself; an MCP server never is one. */
export const MCP_SANDBOX_MODES = sandboxModes.filter((mode) => mode !== 'external-sandbox');

/** A session `ux mcp` can serve: its settings, policy and directory. */
export interface ReadyMcpSession {
  session: CliSession;
  policy: EffectivePolicy;
  cwd: string;
}

/**
 * Arguments, configuration and the tool plan: everything `ux mcp` checks before it serves. Returns
 * `'help'`, a session to serve, or why it cannot serve (told to the client by `serveStartupError`);
 * throws a mistake in the arguments or the configuration (told by `serveMcpFailure`).
 */
export function prepareMcpSession(
  args: string[],
  io: Io,
): ReadyMcpSession | { cannotServe: string } | 'help' {
  const { values, positionals } = parseOptions(
    args,
    {
      cwd: { type: 'string' },
      env: { type: 'string' },
      approval: { type: 'string' },
      ...POLICY_OPTIONS,
      help: { type: 'boolean', short: 'h' },
    },
    MCP_HELP_COMMAND,
  );
  if (values.help) return 'help';
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument "${positionals[0]}"`, MCP_HELP_COMMAND);
  const approvalPolicy: ApprovalPolicy | undefined =
    values.approval === undefined
      ? undefined
      : oneOf(values.approval, simpleApprovalPolicies, '--approval', MCP_HELP_COMMAND);
  const cwd = sessionDirectory(values.cwd, MCP_HELP_COMMAND);
  const flags = policyFlags(values, {
    cwd,
    env: io.env,
    helpCommand: MCP_HELP_COMMAND,
    modes: MCP_SANDBOX_MODES,
  });
  const session = loadPolicySession(
    io,
    { ...flags, approvalPolicy, ...(values.env === undefined ? {} : { environmentId: values.env }) },
    MCP_HELP_COMMAND,
  );
  const policy = sessionPolicy(session, flags, { cwd, env: io.env, helpCommand: MCP_HELP_COMMAND });
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
export function serveMcpFailure(error: unknown, io: Io): Promise<number> {
  if (UsageError.isInstance(error))
    return serveStartupError(
      `${error.message}. These arguments come from the MCP client's configuration of this server: correct them there ('${error.helpCommand}' lists the options)`,
      io,
      { exitCode: 2, stderr: `ux: ${error.message}\nRun '${error.helpCommand}' for usage.\n` },
    );
  if (ConfigError.isInstance(error)) return serveStartupError(error.message, io);
  if (UxError.isInstance(error) && error.code === 'invalid_arguments')
    return serveStartupError(
      `${error.message}. These arguments come from the MCP client's configuration of this server: correct them there ('${MCP_HELP_COMMAND}' lists the options)`,
      io,
      { exitCode: 2, stderr: `ux: ${error.message}\n` },
    );
  const message = error instanceof Error ? error.message : String(error);
  return serveStartupError(`the session could not start: ${message}`, io);
}
