import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { shlexJoin } from '@ux/orchestrator';
import { type ApprovalPolicy, sandboxModes, simpleApprovalPolicies } from '@ux/protocol/core';
import type { ToolResponse, UnifiedExec } from '@ux/unified-exec';
import { attachSession } from './attach-session.js';
import { useBaselineWasmCompiler } from './baseline-wasm-compiler.js';
import { loadCliSession } from './cli-session.js';
import { createCliDoor } from './create-cli-door.js';
import type { Io } from './io.js';
import { nonNegativeInteger, oneOf, parseOptions } from './parse-options.js';
import { type PromptState, runSessionPrompt } from './session-prompt.js';
import { createNoTerminalReviewer, createTerminalReviewer } from './terminal-reviewer.js';
import { UsageError } from './usage-error.js';

export const EXEC_HELP = `Usage: ux exec [options] -- CMD…

Runs CMD through the door, as one exec_command call of a model, and prints the receipt the model
would read. One word is taken as a shell script ('make test && echo ok'); several are quoted and
joined. If the process is still running and this is a terminal, ux attaches: keys go to it through
write_stdin, output streams live, Ctrl-] detaches and leaves a prompt to poll it, write to it or
attach again. Without a terminal, ux polls until the process exits.

Options:
  --tty                  give the command a terminal (stdin stays open)
  --yield-ms N           wait up to N ms for output before the first receipt (default 10000)
  --sandbox MODE         read-only, workspace-write or danger-full-access (default from config)
  --approval POLICY      untrusted, on-failure, on-request or never (default from config)
  --cwd DIR              working directory (default the current one)
  --profile NAME         use [profiles.NAME] from the config
  --json                 print the structured result instead of the receipt
  -h, --help             this help

Exit code: the command's exit code when it finished, 1 when the call failed, 2 for usage errors.
`;

const HELP_COMMAND = 'ux exec --help';
const EXEC_SANDBOX_MODES = sandboxModes.filter((mode) => mode !== 'external-sandbox');

export async function execCommand(args: string[], io: Io): Promise<number> {
  useBaselineWasmCompiler();
  const { values, positionals } = parseOptions(
    args,
    {
      tty: { type: 'boolean' },
      'yield-ms': { type: 'string' },
      sandbox: { type: 'string' },
      approval: { type: 'string' },
      cwd: { type: 'string' },
      profile: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP_COMMAND,
  );
  if (values.help) {
    io.stdout(EXEC_HELP);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('no command given; put it after --', HELP_COMMAND);
  const yieldMs =
    values['yield-ms'] === undefined
      ? undefined
      : nonNegativeInteger(values['yield-ms'], '--yield-ms', HELP_COMMAND);
  const sandboxMode =
    values.sandbox === undefined
      ? undefined
      : oneOf(values.sandbox, EXEC_SANDBOX_MODES, '--sandbox', HELP_COMMAND);
  const approvalPolicy: ApprovalPolicy | undefined =
    values.approval === undefined
      ? undefined
      : oneOf(values.approval, simpleApprovalPolicies, '--approval', HELP_COMMAND);
  const cwd = resolve(values.cwd ?? process.cwd());
  if (!existsSync(cwd) || !statSync(cwd).isDirectory())
    throw new UsageError(`--cwd ${cwd}: no such directory`, HELP_COMMAND);
  const cmd = positionals.length === 1 ? positionals[0]! : shlexJoin(positionals);

  const session = loadCliSession(io, { approvalPolicy, sandboxMode, profile: values.profile });
  for (const warning of session.warnings) io.stderr(`ux: warning: ${warning}\n`);
  const terminal = io.terminal?.();
  const door = await createCliDoor(session, {
    cwd,
    env: io.env,
    reviewer: terminal ? createTerminalReviewer(terminal) : createNoTerminalReviewer(io.stderr),
    onWarning: (message) => io.stderr(`ux: warning: ${message}\n`),
  });

  let calls = 0;
  const nextCall = () => `ux-exec-${++calls}`;
  const print = (response: ToolResponse) =>
    io.stdout(
      values.json ? `${JSON.stringify(response.result ?? { error: response.text })}\n` : `${response.text}\n`,
    );
  const stop: { code?: number } = {};
  const stopSignals = onStopSignals(door, stop);
  try {
    const callId = nextCall();
    let response = await door.execCommand(
      { cmd, tty: values.tty ?? false, ...(yieldMs === undefined ? {} : { yield_time_ms: yieldMs }) },
      { callId },
    );
    print(response);
    let sessionId = response.result?.session_id;
    if (stop.code !== undefined) return stop.code;
    if (sessionId === undefined) return exitCodeOf(response);

    if (terminal && !values.json) {
      const state: PromptState = {
        current: sessionId,
        calls: new Map([[sessionId, { callId, tty: values.tty ?? false }]]),
        nextCall,
      };
      const outcome = await attachSession(door, { sessionId, callId, tty: values.tty ?? false }, terminal);
      if (outcome.kind === 'exited') return outcome.exitCode;
      await runSessionPrompt(door, terminal, state);
      return 0;
    }
    // No person to attach: poll as a model would, until the process exits.
    while (sessionId !== undefined) {
      response = await door.writeStdin(
        { session_id: sessionId, yield_time_ms: 30_000 },
        { callId: nextCall() },
      );
      print(response);
      if (stop.code !== undefined) return stop.code;
      if (!response.success) return 1;
      sessionId = response.result?.session_id;
    }
    return exitCodeOf(response);
  } finally {
    stopSignals();
    terminal?.close();
    await door.shutdown();
  }
}

function exitCodeOf(response: ToolResponse): number {
  if (!response.success) return 1;
  return response.result?.exit_code ?? 0;
}

const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;

/**
 * SIGINT, SIGTERM and SIGHUP stop the waiting and make ux exit with 128 + the signal; the finally
 * block then shuts the door, which ends the processes.
 */
function onStopSignals(door: UnifiedExec, stop: { code?: number }): () => void {
  const handlers = (Object.keys(SIGNAL_NUMBERS) as (keyof typeof SIGNAL_NUMBERS)[]).map((signal) => {
    const handler = () => {
      stop.code ??= 128 + SIGNAL_NUMBERS[signal];
      door.interrupt();
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  return () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
}
