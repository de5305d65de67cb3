import { spawn } from 'node:child_process';
import { closeSync, openSync, writeSync } from 'node:fs';
import { constants } from 'node:os';
import { resolve } from 'node:path';
import { createSandboxSelector } from '@ux/orchestrator/sandbox-selector';
import { type LaunchPlan, type SandboxNotice, TERMINATE_GRACE_MS, UxError } from '@ux/protocol/core';
import { readableText, visibleJson } from '@ux/protocol-utils';
import { withNetworkProxy } from './cli-session.js';
import { credentialVariables, withoutCredentials } from './credential-variables.js';
import type { Io } from './io.js';
import { parseOptions } from './parse-options.js';
import {
  loadPolicySession,
  POLICY_OPTIONS,
  policyFlags,
  policyHelp,
  sessionDirectory,
  sessionPolicy,
} from './policy-options.js';
import { createCliSandboxRegistry } from './sandbox-backends.js';
import { UsageError } from './usage-error.js';
import { withoutTestSwitches } from './without-test-switches.js';

const SANDBOX_MODES = ['read-only', 'workspace-write'] as const;

export const SANDBOX_HELP = `Usage: ux sandbox [options] -- CMD…

Runs CMD directly under this platform's sandbox, with the terminal and environment as they are (less
the variables ux reads tokens from: every token_env), and exits with its exit code (128 + N when signal N ended it). Use it to try a policy: the same one
ux exec and ux mcp give commands, from the config (sandbox_mode, [sandbox_workspace_write],
deny_read, sandbox_backends, sandbox_plugins, [sandbox.<id>]) and these options.

Options:
  --cwd DIR              working directory, writable in workspace-write mode (default the current one)
${policyHelp(SANDBOX_MODES, 'default from config, else workspace-write')}  --network-log FILE     with a network by domain: append one JSON line per connection through the
                         proxy (host, port, decision, bytes each way) to FILE; - for stderr
  --mode MODE            deprecated name of --sandbox
  -h, --help             this help

Exit codes: the command's own; 1 when the sandbox cannot run here (with the fix); 2 usage error.
`;

const HELP_COMMAND = 'ux sandbox --help';
const SIGNALS = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGTERM: 15 } as const;

export async function sandboxCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    {
      cwd: { type: 'string' },
      ...POLICY_OPTIONS,
      mode: { type: 'string' },
      'network-log': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP_COMMAND,
    { takesCommand: true },
  );
  if (values.help) {
    io.stdout(SANDBOX_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('no command given; put it after --', HELP_COMMAND);
  // One name for the mode on every command; --mode keeps working for the scripts that use it.
  if (values.mode !== undefined) {
    if (values.sandbox !== undefined)
      throw new UsageError('give --sandbox only (--mode is its deprecated name)', HELP_COMMAND);
    io.stderr('ux: warning: --mode is deprecated; use --sandbox\n');
  }
  const cwd = sessionDirectory(values.cwd, HELP_COMMAND);
  const flags = policyFlags(
    { ...values, sandbox: values.sandbox ?? values.mode },
    {
      cwd,
      env: io.env,
      helpCommand: HELP_COMMAND,
      modes: SANDBOX_MODES,
      ...(values.mode === undefined ? {} : { sandboxOption: '--mode' }),
    },
  );
  const session = loadPolicySession(io, flags, HELP_COMMAND);
  const mode = session.settings.sandboxMode;
  if (!(SANDBOX_MODES as readonly string[]).includes(mode.value))
    throw new UsageError(
      `ux sandbox runs commands under a sandbox, and sandbox mode ${mode.value} (from ${mode.source}) has none; pass --sandbox read-only or --sandbox workspace-write`,
      HELP_COMMAND,
    );
  for (const warning of session.warnings) io.stderr(`ux: warning: ${warning}\n`);
  const policy = sessionPolicy(session, flags, { cwd, env: io.env, helpCommand: HELP_COMMAND });

  const selector = createSandboxSelector({
    sandboxRegistry: createCliSandboxRegistry(
      session.sandboxPlugins,
      session.settings.enabledBackends?.value,
      session.sandboxHost,
    ),
    platform: io.platform,
    enabledBackends: session.settings.enabledBackends?.value,
    allowedBackends: session.settings.allowedBackends,
  });
  const logPath = values['network-log'];
  if (logPath !== undefined && policy.network !== 'proxied')
    throw new UsageError(
      '--network-log logs the connections of a network by domain; add --allow-domain HOST (or network = { allow = […] } in the config)',
      HELP_COMMAND,
    );
  // The first backend that enforces everything this policy needs; none → refused with what is missing.
  const { backend, passedOver } = await selector.choose(policy);
  // A fallback is said: the person configured another backend first.
  for (const passed of passedOver)
    io.stderr(
      `ux sandbox: ${backend.id}; preferred ${readableText(passed.backend)} not used: ${readableText(passed.reason)}\n`,
    );
  const tty = Boolean(process.stdin.isTTY);
  // Opened before the proxy starts, so a log that cannot be written leaves nothing running.
  const log = logPath === undefined ? undefined : openNetworkLog(logPath, cwd, io);
  // A network by domain: this run's proxy. Nobody can be asked here (the terminal is the command's),
  // so hosts outside the allow list are denied; the 403 says which rule and what to change.
  const proxy =
    policy.network === 'proxied'
      ? await (await import('./cli-network-proxy.js'))
          .startCliNetworkProxy(
            { ...session.settings.network, askUnknown: { value: false, source: 'ux sandbox asks nobody' } },
            {
              platform: io.platform,
              env: io.env,
              onWarning: (message) => io.stderr(`ux: warning: ${readableText(message)}\n`),
            },
          )
          .catch((error: unknown) => {
            log?.close();
            throw error;
          })
      : undefined;
  const stopLog = log && proxy?.onAccess((event) => log.write(`${visibleJson(event)}\n`));
  try {
    const effective = proxy ? withNetworkProxy(policy, proxy.endpoint) : policy;
    const plan = await backend.plan({
      argv: positionals,
      cwd,
      env: Object.fromEntries(
        Object.entries(
          withoutCredentials(withoutTestSwitches(io.env), credentialVariables(session.settings.environments)),
        ).filter((entry): entry is [string, string] => entry[1] !== undefined),
      ),
      policy: effective,
      tty,
    });
    // What the sandbox takes back (a protected path the command created) is said on stderr at once.
    const say = (notice: SandboxNotice) =>
      io.stderr(`${tty ? '\r\n' : ''}ux sandbox: ${readableText(notice.message)}\n`);
    plan.onNotice?.(say);
    try {
      return await run(plan, tty);
    } finally {
      // The backend's helpers end with this process (the path guard at the end of its input).
      await plan.cleanup?.();
    }
  } finally {
    // Closing the proxy ends its last exchanges, whose events still reach the log.
    await proxy?.close();
    stopLog?.();
    log?.close();
  }
}

/** The `--network-log` target: a file opened for appending (its failure is a clear error), or stderr. */
function openNetworkLog(path: string, cwd: string, io: Io): { write(line: string): void; close(): void } {
  if (path === '-') return { write: (line) => io.stderr(line), close: () => {} };
  const file = resolve(cwd, path);
  let fd: number;
  try {
    fd = openSync(file, 'a', 0o600);
  } catch (error) {
    throw new UxError(
      'config_error',
      `--network-log ${path}: cannot open ${file} for appending (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  return { write: (line) => writeSync(fd, line), close: () => closeSync(fd) };
}

/**
 * Runs the plan with the terminal inherited and resolves with the exit code. With a terminal the
 * command stays in this job's process group, so Ctrl-C and Ctrl-\\ reach it from the terminal itself
 * (and the sandbox wrapper passes them by). Without one it leads a process group of its own, and ux
 * passes SIGINT and SIGQUIT on to that group. SIGTERM and SIGHUP sent to ux end the command as the
 * door's terminate does: the signal first, then SIGKILL of what is left after a short grace.
 */
function run(plan: LaunchPlan, tty: boolean): Promise<number> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(plan.argv[0]!, plan.argv.slice(1), {
      cwd: plan.cwd,
      env: plan.env,
      stdio: 'inherit',
      detached: !tty,
    });
    const send = (signal: NodeJS.Signals) => {
      try {
        if (tty) child.kill(signal);
        else if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    };
    let kill: NodeJS.Timeout | undefined;
    const handlers = (Object.keys(SIGNALS) as (keyof typeof SIGNALS)[]).map((signal) => {
      const handler = () => {
        const fromTerminal = signal === 'SIGINT' || signal === 'SIGQUIT';
        if (fromTerminal && tty) return;
        send(signal);
        if (!fromTerminal) kill ??= setTimeout(() => send('SIGKILL'), TERMINATE_GRACE_MS);
      };
      process.on(signal, handler);
      return [signal, handler] as const;
    });
    const done = () => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
      clearTimeout(kill);
    };
    child.once('error', (error) => {
      done();
      reject(error);
    });
    child.once('exit', (code, signal) => {
      done();
      resolvePromise(code ?? 128 + (signal ? signalNumber(signal) : 0));
    });
  });
}

function signalNumber(signal: NodeJS.Signals): number {
  return constants.signals[signal] ?? 0;
}
