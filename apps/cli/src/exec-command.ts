import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { shlexJoin } from '@ux/orchestrator';
import { type ApprovalPolicy, sandboxModes, simpleApprovalPolicies, UxError } from '@ux/protocol/core';
import { readableText, visibleJson } from '@ux/protocol-utils';
import type { ToolResponse, UnifiedExec } from '@ux/unified-exec';
import { ApprovalInbox } from './approval-inbox.js';
import { attachSession } from './attach-session.js';
import { checkCommandWords } from './check-command-words.js';
import { createCliDoor } from './create-cli-door.js';
import { approvalRoute, createInboxReviewer } from './inbox-reviewer.js';
import type { Io } from './io.js';
import { someoneCanAnswer } from './mcp-policy-words.js';
import { pausingReviewer } from './mcp-reviewer.js';
import { missingToolsReason } from './missing-tools-reason.js';
import { OutputShownEarly, outputQuiet } from './output-shown-early.js';
import { nonNegativeInteger, oneOf, parseOptions } from './parse-options.js';
import {
  loadPolicySession,
  POLICY_OPTIONS,
  policyFlags,
  policyHelp,
  sessionPolicy,
} from './policy-options.js';
import { serveApprovals } from './serve-approvals.js';
import { serveSessions, startProcessControl } from './serve-sessions.js';
import { type PromptState, runSessionPrompt } from './session-prompt.js';
import { createNoTerminalReviewer, createTerminalReviewer } from './terminal-reviewer.js';
import type { QuestionHooks } from './terminal-view.js';
import { runTerminalView } from './terminal-view.js';
import { UsageError } from './usage-error.js';

const EXEC_SANDBOX_MODES = sandboxModes.filter((mode) => mode !== 'external-sandbox');

export const EXEC_HELP = `Usage: ux exec [options] -- CMD…

Runs CMD through the door, as one exec_command call of a model would. One word is taken as a shell
script ('make test && echo ok'); several are quoted and joined.

On a terminal, output streams as it comes; a command still running after the first moment is
attached at once (keys go to it, Ctrl-] detaches and leaves a prompt to poll it, write to it or
attach again), and the end is shown as the exit code and the real elapsed time. With --receipt,
--json, or when stdout is not a terminal, ux prints the receipt the model would read and, without a
terminal, polls until the process exits; a command waiting for input is ended then (exit 1), since
nobody can type into it.

When a command needs approval, ux asks on the terminal and one key answers: [y] approve once,
[a] approve for this session, [p] always allow (saves a prefix_rule to $UX_HOME/rules/default.rules:
matching commands then run without asking and outside the sandbox; never offered for shells and
interpreters), [n] deny, [x] or Ctrl-C abort. The question says whether approving runs the command
outside the sandbox, now or on a rerun after the sandbox blocked it. Without a terminal, the question
waits in the approvals inbox, answered with 'ux approvals' from another terminal (stderr names it;
approval_timeout_s bounds the wait); with approvals_via = "client" in config.toml nothing that needs
approval runs ("no one could be asked for approval").

Options:
  --tty                  give the command a terminal (stdin stays open)
  --yield-ms N           with a receipt: wait up to N ms for output before it (default 10000)
  --approval POLICY      untrusted, on-failure, on-request or never (default from config)
  --cwd DIR              working directory (default the current one)
  --env NAME             run in the environment NAME: local, or a ux exec-server configured as
                         [environments.NAME] (default: default_environment, else local)
${policyHelp(EXEC_SANDBOX_MODES)}  --receipt              print the model's receipt even on a terminal
  --json                 print the structured result instead of the receipt (JSON lines; with a
                         network by domain, each connection's network_access event too)
  -h, --help             this help

Exit code: the command's exit code when it finished, 1 when the call failed, 2 for usage errors.
`;

const HELP_COMMAND = 'ux exec --help';

export async function execCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(
    args,
    {
      tty: { type: 'boolean' },
      'yield-ms': { type: 'string' },
      approval: { type: 'string' },
      cwd: { type: 'string' },
      env: { type: 'string' },
      ...POLICY_OPTIONS,
      json: { type: 'boolean' },
      receipt: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    HELP_COMMAND,
    { takesCommand: true },
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
  const approvalPolicy: ApprovalPolicy | undefined =
    values.approval === undefined
      ? undefined
      : oneOf(values.approval, simpleApprovalPolicies, '--approval', HELP_COMMAND);
  const cwd = resolve(values.cwd ?? process.cwd());
  if (!existsSync(cwd) || !statSync(cwd).isDirectory())
    throw new UsageError(`--cwd ${cwd}: no such directory`, HELP_COMMAND);
  checkCommandWords(positionals, HELP_COMMAND);
  const cmd = positionals.length === 1 ? positionals[0]! : shlexJoin(positionals);

  const flags = policyFlags(values, {
    cwd,
    env: io.env,
    helpCommand: HELP_COMMAND,
    modes: EXEC_SANDBOX_MODES,
  });
  const session = loadPolicySession(
    io,
    { ...flags, approvalPolicy, ...(values.env === undefined ? {} : { environmentId: values.env }) },
    HELP_COMMAND,
  );
  const policy = sessionPolicy(session, flags, { cwd, env: io.env, helpCommand: HELP_COMMAND });
  // shell_zsh_fork without the composition offers shell_command only: run through it, one shot.
  const oneShot =
    !session.toolPlan.tools.includes('exec_command') && session.toolPlan.tools.includes('shell_command');
  const notOffered = oneShot ? undefined : missingToolsReason(session, ['exec_command']);
  if (notOffered) throw new UxError('config_error', notOffered);
  if (session.toolPlan.zshForkUnavailable !== undefined)
    throw new UxError('config_error', `the zsh fork cannot start: ${session.toolPlan.zshForkUnavailable}`);
  for (const warning of session.warnings) io.stderr(`ux: warning: ${warning}\n`);
  const terminal = io.terminal?.();
  // The terminal view, once it runs, shows the command's output so far before a per-exec question.
  const questionHooks: QuestionHooks = {};
  const ruleFile = join(session.rulesDirectory, 'default.rules');
  // Without a terminal, questions wait in the approvals inbox (unless approvals_via = "client").
  const inbox =
    !terminal && approvalRoute(session.review.approvalsVia.value, false) === 'inbox'
      ? new ApprovalInbox({ ruleFile })
      : undefined;
  // `ux ps`, `ux attach` and `ux approvals` reach this process through its control socket, started
  // beside the door; the inbox needs it before the first question.
  const control = startProcessControl('exec', cwd, (message) => io.stderr(`ux: warning: ${message}\n`));
  let served: UnifiedExec | undefined;
  void control.then((server) => server && serveSessions(server, () => served));
  const inboxServer = inbox ? await control : undefined;
  if (inboxServer && inbox) serveApprovals(inboxServer, inbox);
  inbox?.onChange((event) => {
    if (event.type !== 'added') return;
    const command = event.approval.details[0]?.text ?? '';
    io.stderr(
      `ux: \`${command}\` needs approval: waiting for an answer in the approvals inbox (question ${event.approval.id}); answer it with \`ux approvals\` from a terminal, or \`ux approvals answer ${event.approval.id} approve|deny\`\n`,
    );
  });
  let setPaused: (paused: boolean) => void = () => {};
  const door = await createCliDoor(session, {
    policy,
    cwd,
    env: io.env,
    platform: io.platform,
    reviewer: terminal
      ? createTerminalReviewer(terminal, {
          ruleFile,
          beforeQuestion: (request) => questionHooks.beforeQuestion?.(request),
          onAnswer: (request, decision) => questionHooks.onAnswer?.(request, decision),
        })
      : inbox
        ? pausingReviewer(
            createInboxReviewer(inbox, {
              timeoutSeconds: session.review.approvalTimeoutS.value,
              unreachable: () =>
                inboxServer ? undefined : 'this process has no control socket (see its warning)',
            }),
            (paused) => setPaused(paused),
          )
        : createNoTerminalReviewer(io.stderr),
    reviewerCanAsk: someoneCanAnswer(session, terminal !== undefined || inbox !== undefined),
    onWarning: (message) => io.stderr(`ux: warning: ${readableText(message)}\n`),
  }).catch(async (error: unknown) => {
    await (await control)?.close();
    throw error;
  });
  setPaused = (paused) => door.setPaused(paused);

  served = door;

  // --json is a stream of JSON lines: the results, and each exchange through the session's network
  // proxy as it ends (a `network_access` event), so a denied host is on record beside the command.
  const stopNetworkEvents = values.json
    ? door.onEvent((event) => {
        if (event.type === 'network_access') io.stdout(`${visibleJson(event)}\n`);
      })
    : undefined;

  let calls = 0;
  const nextCall = () => `ux-exec-${++calls}`;
  const tty = values.tty ?? false;
  // A receipt's output is the command's data, printed as it came; JSON lines carry no invisible
  // character, and a failure (ux's own line, quoting the command) shows escapes.
  const print = (response: ToolResponse) =>
    io.stdout(
      values.json
        ? `${visibleJson(response.result ?? { error: response.text })}\n`
        : // A failure's text is ux's own lines, each of which may quote the command: escaped line by line.
          `${response.success ? response.text : response.text.split('\n').map(readableText).join('\n')}\n`,
    );
  const stop = onStopSignals(door, { person: terminal !== undefined });
  const finish = async (work: Promise<number>): Promise<number> => {
    const code = await Promise.race([work, stop.stopped]);
    if (stop.signal) io.stderr(`ux: stopped by ${stop.signal}: ending the command and exiting\n`);
    return code;
  };
  try {
    if (oneShot) {
      if (tty) io.stderr('ux: warning: shell_command has no terminal; --tty is ignored\n');
      return await finish(
        (async () => {
          const callId = nextCall();
          // On a terminal, a per-exec question comes after what the command printed so far (the
          // receipt at the end still holds all of it), and an abort there ends the command.
          const early = new OutputShownEarly();
          if (terminal && !values.json)
            questionHooks.beforeQuestion = async (request) => {
              if (request.call_id !== callId || request.approval_id === undefined) return;
              await outputQuiet(() => door.outputSoFar(callId)?.length ?? 0);
              const text = early.next(door.outputSoFar(callId));
              if (text !== '') terminal.write(text.endsWith('\n') ? text : `${text}\n`);
            };
          // An abort at that question ends the command.
          let perExecAborted = false;
          questionHooks.onAnswer = (request, decision) => {
            if (request.call_id === callId && request.approval_id !== undefined && decision.type === 'abort')
              perExecAborted = true;
          };
          const response = await door.shellCommand({ command: cmd }, { callId });
          if (perExecAborted && terminal && !values.json) {
            terminal.write(
              '[ux: aborted at the question: the program was refused and the command was ended]\n',
            );
            return 130;
          }
          print(response);
          if (!response.success) return 1;
          return Number(/^Exit code: (-?\d+)/.exec(response.text)?.[1] ?? 1);
        })(),
      );
    }
    // A person at a terminal gets the live view; receipts are for --receipt, --json and pipes.
    if (terminal && !values.json && !values.receipt)
      return await finish(
        runTerminalView(door, { cmd, tty, callId: nextCall(), nextCall }, terminal, questionHooks),
      );
    return await finish(
      (async () => {
        const callId = nextCall();
        const before = new Set(door.processes().map((process) => process.sessionId));
        let response = await door.execCommand(
          { cmd, tty, ...(yieldMs === undefined ? {} : { yield_time_ms: yieldMs }) },
          { callId },
        );
        if (stop.signal) return stop.code;
        let sessionId = response.result?.session_id;
        if (response.aborted && terminal) {
          // Ctrl-C stopped the wait, not the command: it keeps running, and the prompt can reach it.
          sessionId = door.processes().find((process) => !before.has(process.sessionId))?.sessionId;
          io.stderr(
            sessionId === undefined
              ? 'ux: stopped waiting; the command had not started\n'
              : `ux: stopped waiting; the command keeps running as session ${sessionId}\n`,
          );
          if (sessionId === undefined) return 130;
          await runSessionPrompt(door, terminal, promptState(sessionId, callId, tty, nextCall));
          return 0;
        }
        print(response);
        if (sessionId === undefined) return exitCodeOf(response);

        if (terminal && !values.json) {
          const outcome = await attachSession(door, { sessionId, callId, tty }, terminal);
          if (outcome.kind === 'exited') return outcome.exitCode;
          await runSessionPrompt(door, terminal, promptState(sessionId, callId, tty, nextCall));
          return 0;
        }
        // No person to attach: poll as a model would, until the process exits. One that waits for
        // input never will (nobody can type into it): said, and ended (the door's shutdown) rather
        // than polled again, since each poll would answer at once.
        while (sessionId !== undefined) {
          if (response.result?.waiting_for_input) {
            io.stderr(
              `ux: the command is waiting for input and nobody can type into it (no terminal); ending session ${sessionId}\n`,
            );
            return 1;
          }
          response = await door.writeStdin(
            { session_id: sessionId, yield_time_ms: 30_000 },
            { callId: nextCall() },
          );
          if (stop.signal) return stop.code;
          print(response);
          if (!response.success) return 1;
          sessionId = response.result?.session_id;
        }
        return exitCodeOf(response);
      })(),
    );
  } finally {
    stop.remove();
    terminal?.close();
    await door.shutdown();
    await (await control)?.close();
    stopNetworkEvents?.();
  }
}

function promptState(sessionId: number, callId: string, tty: boolean, nextCall: () => string): PromptState {
  return { current: sessionId, calls: new Map([[sessionId, { callId, tty }]]), nextCall };
}

function exitCodeOf(response: ToolResponse): number {
  if (!response.success) return 1;
  return response.result?.exit_code ?? 0;
}

const SIGNAL_NUMBERS = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 } as const;
type StopSignal = keyof typeof SIGNAL_NUMBERS;

interface StopSignals {
  /** Resolves with 128 + the signal when one stops ux. */
  stopped: Promise<number>;
  signal?: StopSignal;
  code: number;
  remove(): void;
}

/**
 * SIGTERM and SIGHUP, and SIGINT when no person is at a terminal, stop ux: the waiting ends, ux exits
 * with 128 + the signal, and the door's shutdown ends the processes. With a person at the terminal,
 * SIGINT (Ctrl-C at a prompt or during a receipt's wait) only stops the waiting: the command keeps
 * running, as an interrupt of the door promises.
 */
function onStopSignals(door: UnifiedExec, options: { person: boolean }): StopSignals {
  let resolveStopped!: (code: number) => void;
  const state: StopSignals = {
    stopped: new Promise((resolve) => {
      resolveStopped = resolve;
    }),
    code: 0,
    remove: () => {
      for (const [signal, handler] of handlers) process.off(signal, handler);
    },
  };
  const handlers = (Object.keys(SIGNAL_NUMBERS) as StopSignal[]).map((signal) => {
    const handler = () => {
      door.interrupt();
      if (signal === 'SIGINT' && options.person) return;
      if (state.signal) return;
      state.signal = signal;
      state.code = 128 + SIGNAL_NUMBERS[signal];
      resolveStopped(state.code);
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  return state;
}
