import {
  type ApprovalRequest,
  MIN_YIELD_TIME_MS,
  type ReviewDecision,
  type UxEvent,
} from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import type { UnifiedExec } from '@ux/unified-exec';
import { attachSession, attachStatus, formatElapsed } from './attach-session.js';
import { OutputShownEarly, outputQuiet } from './output-shown-early.js';
import { type PromptState, runSessionPrompt } from './session-prompt.js';
import type { Terminal } from './terminal.js';

/** The terminal reviewer's hooks, which the view sets while it runs. */
export interface QuestionHooks {
  beforeQuestion?: (request: ApprovalRequest) => Promise<void>;
  onAnswer?: (request: ApprovalRequest, decision: ReviewDecision) => void;
}

export interface TerminalViewCommand {
  cmd: string;
  tty: boolean;
  callId: string;
  nextCall: () => string;
}

/**
 * `ux exec` for a person at a terminal: output streams as it comes, a command still running after
 * the early-exit window is attached at once, and the end is said in words with the real elapsed
 * time. Keys typed while the command starts are kept for it (the terminal is raw from the start, so
 * nothing is echoed twice and Ctrl-C is a key for the command, not a signal that would end ux).
 * The model's receipt stays the format of `--receipt`, `--json` and pipes.
 */
export async function runTerminalView(
  door: UnifiedExec,
  command: TerminalViewCommand,
  terminal: Terminal,
  /** The terminal reviewer's hook, set here: the output so far goes out before a per-exec question. */
  hooks: QuestionHooks = {},
): Promise<number> {
  // An abort at a per-exec question (ZshFork) refuses the program and ends the command, attached or
  // not; the view says so at the end.
  const perExec = { aborted: false };
  hooks.onAnswer = (request, decision) => {
    if (request.call_id === command.callId && request.approval_id !== undefined && decision.type === 'abort')
      perExec.aborted = true;
  };
  try {
    const code = await view(door, command, terminal, perExec, hooks);
    if (perExec.aborted && code !== ABORTED) {
      terminal.write('[ux: aborted at the question: the program was refused and the command was ended]\n');
      return ABORTED;
    }
    return code;
  } finally {
    hooks.onAnswer = undefined;
    hooks.beforeQuestion = undefined;
  }
}

/** `ux exec`'s exit code when a person aborted at a question. */
const ABORTED = 130;

async function view(
  door: UnifiedExec,
  command: TerminalViewCommand,
  terminal: Terminal,
  perExec: { aborted: boolean },
  hooks: QuestionHooks,
): Promise<number> {
  let typedAhead = '';
  const releaseKeys = terminal.raw((data) => {
    typedAhead += data.toString('utf8');
  });
  // Until the first call returns, its result holds all the output (deltas start only after the
  // early-exit window, as upstream): it is printed whole, in order, from the result.
  let startedAt = Date.now();
  const before = new Set(door.processes().map((process) => process.sessionId));
  // The clock runs from the call, so a command that ends inside the early-exit window (its Begin comes
  // only after that window) shows its real time; a question to the person restarts it at the Begin,
  // so the time spent answering is not the command's.
  let asked = false;
  // A per-exec question (ZshFork) comes while the command runs, before this call's result: what the
  // command printed so far goes out first, so the question follows the script's earlier lines.
  const early = new OutputShownEarly();
  let firstCallDone = false;
  const showEarly = () => {
    // Once the first result is in, output streams as it comes (attach): nothing to show early.
    if (firstCallDone) return;
    const text = early.next(door.outputSoFar(command.callId));
    if (text !== '') terminal.write(text);
  };
  // The shell printed its earlier lines before it started the program, but they may still be on their
  // way from the terminal: wait until the output has been still for a moment (at most ~100 ms).
  hooks.beforeQuestion = async (request) => {
    if (request.call_id !== command.callId || request.approval_id === undefined || firstCallDone) return;
    await outputQuiet(() => door.outputSoFar(command.callId)?.length ?? 0);
    showEarly();
  };
  const noteStart = door.onEvent((event: UxEvent) => {
    if (event.type === 'exec_approval_request' && event.call_id === command.callId) asked = true;
    if (event.type === 'exec_command_begin' && event.call_id === command.callId && asked)
      startedAt = Date.now();
  });
  let response: Awaited<ReturnType<UnifiedExec['execCommand']>>;
  try {
    response = await door.execCommand(
      {
        cmd: command.cmd,
        tty: command.tty,
        // The shortest wait the door allows: long enough for the early-exit window (a sandbox
        // denial, the retry), short enough that a person sees the command attached at once.
        yield_time_ms: MIN_YIELD_TIME_MS,
        // Only the door's 1 MiB transcript bounds what a person sees, not a model's token budget.
        max_output_tokens: PERSON_MAX_OUTPUT_TOKENS,
      },
      { callId: command.callId },
    );
  } finally {
    noteStart();
  }
  const result = response.result;
  // What the command printed after the last question and before an abort there ended it.
  if (response.aborted && perExec.aborted) showEarly();
  firstCallDone = true;
  // An abort at a per-exec question (a program the zsh fork intercepted) refused the program and
  // ended the command: wait for its end and say so. Any other abort stops waiting, never the command:
  // a command that ended meanwhile is shown as ended, one still running is at the prompt.
  const running = response.aborted
    ? door.processes().find((process) => !before.has(process.sessionId) && process.running)
    : undefined;
  if (response.aborted && result.exit_code === undefined && perExec.aborted) {
    releaseKeys();
    if (running) await processEnded(door, running.sessionId);
    if (!early.atLineStart) terminal.write('\n');
    terminal.write(
      `[ux: aborted at the question: the program was refused and the command was ended after ${formatElapsed(Date.now() - startedAt)}]\n`,
    );
    return ABORTED;
  }
  if (response.aborted && result.exit_code === undefined) {
    releaseKeys();
    if (!running) {
      terminal.write('ux: stopped; the command had not started\n');
      return 130;
    }
    terminal.write(`ux: stopped waiting; the command keeps running as session ${running.sessionId}\n`);
    await runSessionPrompt(door, terminal, {
      current: running.sessionId,
      calls: new Map([[running.sessionId, { callId: command.callId, tty: command.tty }]]),
      nextCall: command.nextCall,
    });
    return 0;
  }
  if (!response.success && !response.aborted) {
    releaseKeys();
    // People get the reason; the model's wrapper around it names an argv they did not type. Either may
    // quote the command's words: escapes, never control characters, on ux's own line.
    terminal.write(
      `ux: ${readableText(response.error ? `not run: ${response.error.message}` : (result.error?.message ?? result.refusal?.reason ?? response.text))}\n`,
    );
    return 1;
  }
  // A fallback is said before the output: the person configured another backend first.
  for (const passed of result.sandbox?.passed_over ?? [])
    terminal.write(
      `[ux sandbox: ${readableText(result.sandbox!.backend)}; preferred ${readableText(passed.backend)} not used: ${readableText(passed.reason)}]\n`,
    );
  if (result.session_id !== undefined)
    terminal.write(attachStatus({ sessionId: result.session_id, tty: command.tty }));
  const rest = early.rest(result.output);
  if (rest !== '') terminal.write(rest);
  for (const notice of result.sandbox_notices ?? [])
    terminal.write(`[ux sandbox: ${readableText(notice)}]\n`);
  if (result.session_id === undefined) {
    releaseKeys();
    if (result.output !== '' && !result.output.endsWith('\n')) terminal.write('\n');
    const code = result.exit_code ?? 0;
    // The elapsed time is the command's, from its start (after any approval), not the receipt's wait.
    const elapsed = formatElapsed(Date.now() - startedAt);
    terminal.write(
      result.sandbox_denied || result.denial
        ? `[ux: ${blockedBecause(result)}; exit code ${code} after ${elapsed}]\n`
        : `[ux: exited with code ${code} after ${elapsed}]\n`,
    );
    return code;
  }
  const sessionId = result.session_id;
  const target = { sessionId, callId: command.callId, tty: command.tty, startedAt };
  const atLineStart = result.output === '' || result.output.endsWith('\n');
  // attach takes the keys over before this consumer lets them go: none is lost in between.
  const attached = attachSession(door, { ...target, typedAhead, atLineStart, announced: true }, terminal);
  releaseKeys();
  const outcome = await attached;
  if (outcome.kind === 'exited') return outcome.exitCode;
  const state: PromptState = {
    current: sessionId,
    calls: new Map([[sessionId, { callId: command.callId, tty: command.tty }]]),
    nextCall: command.nextCall,
  };
  await runSessionPrompt(door, terminal, state);
  return 0;
}

/** Resolves when session `sessionId` has ended (its End event), at once when it is not running. */
function processEnded(door: UnifiedExec, sessionId: number): Promise<void> {
  return new Promise((resolve) => {
    let stop: (() => void) | undefined;
    const done = () => {
      stop?.();
      resolve();
    };
    stop = door.onEvent((event) => {
      if (event.type === 'exec_command_end' && event.process_id === String(sessionId)) done();
    });
    if (!door.processes().some((process) => process.sessionId === sessionId && process.running)) done();
  });
}

/** About 4 MB: more than the 1 MiB the door keeps, so the whole kept output is shown. */
const PERSON_MAX_OUTPUT_TOKENS = 1_000_000;

const CAUSES = [
  /read-only file system/i,
  /permission denied/i,
  /operation not permitted/i,
  /network is unreachable/i,
  /could not resolve host/i,
  /temporary failure in name resolution/i,
];

/**
 * Why the run was blocked, in the words the model reads: the result's named denial (`nameDenial`,
 * "the sandbox blocked a write to /etc/x: it is outside …"), else what the OS said.
 */
function blockedBecause(result: { denial?: { message: string }; output: string }): string {
  const message = result.denial?.message.trim().replace(/\.$/, '');
  if (!message) return `blocked by the sandbox${denialCause(result.output)}`;
  // On ux's own line: "the sandbox blocked …", "the network proxy refused …".
  const own = message.replace(/^The /, 'the ').replace(/^ux's network proxy/, 'the network proxy');
  return readableText(own);
}

/** What the blocked run said about why, as the OS put it. */
function denialCause(output: string): string {
  for (const cause of CAUSES) {
    const found = cause.exec(output);
    if (found) return ` (${found[0].toLowerCase()})`;
  }
  return '';
}
