import { EXEC_RESULT_VERSION, type ExecResult, type Refusal, type SandboxDenial } from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import { CollectedOutput } from './collected-output.js';

/** Six random lowercase hex characters: a label for one piece of output, not a secret. */
export function newChunkId(): string {
  return Math.floor(Math.random() * 0x1000000)
    .toString(16)
    .padStart(6, '0');
}

export interface ResponseParts {
  chunkId: string;
  /** From the moment the call started (its handler's entry), approvals and sandbox set-up included. */
  wallTimeMs: number;
  /** The command as the call gave it (`cmd`); absent for `write_stdin`. */
  command?: string;
  exitCode?: number;
  sessionId?: number;
  /** The session has a terminal (what `write_stdin` may send it); for the next step of a running one. */
  tty?: boolean;
  /** The output this call collected. */
  output: CollectedOutput;
  /** The effective token budget. */
  maxTokens: number;
  /** The sandbox level the command started under (on the answer of the call that started it; absent unsandboxed). */
  sandbox?: ExecResult['sandbox'];
  /** What the sandbox took back since the last receipt of this process, one message each. */
  notices?: readonly string[];
  /** The sandbox blocked the run (or something it tried) and it was not run again. */
  sandboxDenied?: boolean;
  /** What it blocked, named (`nameDenial`). */
  denial?: SandboxDenial;
  /** What to do next; default the session hint for a running process. */
  nextStep?: string;
  /** The wait was stopped (an interrupt): status `interrupted`. */
  interrupted?: boolean;
  /** The running process is blocked reading its terminal or stdin pipe (Linux; `ExecProcess.waitingForInput`). */
  waitingForInput?: boolean;
}

/** The next step of a process that is still running: how to poll it, type into it and stop it. */
export function runningNextStep(sessionId: number, tty: boolean | undefined): string {
  const write = tty
    ? ', chars to type into it (end a line with "\\n")'
    : ' (it has no stdin: start it with tty true to type into it)';
  return `The process is still running: call write_stdin with session_id ${sessionId} and empty chars to wait for more output${write}, or chars "\\u0003" (Ctrl-C) to stop it.`;
}

/** The next step of a process that waits for input. */
export function waitingNextStep(sessionId: number, tty: boolean | undefined): string {
  if (!tty)
    return `The process is waiting for input on its stdin, which this session cannot write to: call write_stdin with session_id ${sessionId} and chars "\\u0003" (Ctrl-C) to stop it, and run it again with tty true (or with its input given another way).`;
  return `The process is waiting for input: call write_stdin with session_id ${sessionId} and chars to type into it (end a line with "\\n"), or chars "\\u0003" (Ctrl-C) to stop it. Polling with empty chars returns nothing new until it gets input.`;
}

/**
 * The structured result of a wait (exited, running, or interrupted with what was collected): the
 * source of the text. `output` is what the text shows: within the call's token budget
 * (`max_output_tokens`, default 10000 tokens, about 40 KB), head and tail with the middle marked.
 * Upstream sends the whole kept output (up to 1 MiB, middle dropped without a mark) unless the call
 * set a budget; a reply of megabytes is no use to a client, and the counts below describe it all.
 */
export function renderStructured(parts: ResponseParts): ExecResult {
  const shown = parts.output.truncated(parts.maxTokens);
  const truncated = !parts.output.complete || shown !== parts.output.text();
  const status = parts.interrupted ? 'interrupted' : parts.exitCode !== undefined ? 'exited' : 'running';
  const waiting = parts.waitingForInput === true && status === 'running' && parts.sessionId !== undefined;
  const nextStep =
    parts.nextStep ??
    (parts.sessionId !== undefined
      ? waiting
        ? waitingNextStep(parts.sessionId, parts.tty)
        : runningNextStep(parts.sessionId, parts.tty)
      : undefined);
  return {
    result_version: EXEC_RESULT_VERSION,
    status,
    ...(parts.command === undefined ? {} : { command: commandField(parts.command) }),
    ...(parts.chunkId !== '' ? { chunk_id: parts.chunkId } : {}),
    wall_time_seconds: seconds(parts.wallTimeMs),
    ...(parts.exitCode !== undefined ? { exit_code: parts.exitCode } : {}),
    ...(parts.sessionId !== undefined ? { session_id: parts.sessionId } : {}),
    ...(waiting ? { waiting_for_input: true } : {}),
    original_token_count: parts.output.tokenCount,
    output_bytes: parts.output.byteLength,
    output_lines: parts.output.lineCount,
    ...(truncated ? { output_truncated: true } : {}),
    ...(parts.sandbox ? { sandbox: parts.sandbox } : {}),
    ...(parts.notices?.length ? { sandbox_notices: parts.notices.map(readableText) } : {}),
    ...(parts.sandboxDenied || parts.denial ? { sandbox_denied: true } : {}),
    ...(parts.denial ? { denial: parts.denial } : {}),
    ...(nextStep === undefined ? {} : { next_step: nextStep }),
    output: shown,
  };
}

/** A call that ran nothing: refused (`refusal`) or failed (`error`), with its wall time and next step. */
export function renderNotRun(parts: {
  status: 'refused' | 'failed' | 'interrupted';
  wallTimeMs: number;
  command?: string;
  sessionId?: number;
  refusal?: Refusal;
  error?: { code: string; message: string };
  nextStep?: string;
}): ExecResult {
  return {
    result_version: EXEC_RESULT_VERSION,
    status: parts.status,
    ...(parts.command === undefined ? {} : { command: commandField(parts.command) }),
    wall_time_seconds: seconds(parts.wallTimeMs),
    ...(parts.sessionId === undefined ? {} : { session_id: parts.sessionId }),
    ...(parts.refusal ? { refusal: parts.refusal } : {}),
    ...(parts.error ? { error: parts.error } : {}),
    ...(parts.nextStep === undefined ? {} : { next_step: parts.nextStep }),
    output: '',
  };
}

const DECIDERS: Record<Refusal['decided_by'], string> = {
  person: 'the person',
  client: "the MCP client's automatic answer",
  reviewer: 'the automatic reviewer',
  rule: 'a rule',
  policy: 'the policy',
  nobody: 'nobody could be asked',
};

/**
 * The text the model reads (docs/reference/door.md §7, docs/reference/result.md), rendered from the
 * structured result alone: every line comes from one of its fields, and every field a model needs
 * has a line. Lines of a receipt keep the order and words clients already parse.
 */
export function renderResultText(result: ExecResult): string {
  const lines: string[] = [];
  const command = result.command === undefined ? '' : ` \`${quotedCommand(result.command)}\``;
  if (result.status === 'refused' && result.refusal) {
    lines.push(`Not run${command}: ${readableText(result.refusal.reason)}`);
    lines.push(`Refused by: ${DECIDERS[result.refusal.decided_by]} (${result.refusal.decided_by})`);
  } else if (result.status === 'failed' && result.error) {
    // A message without a command names its tool already (`write_stdin failed: …`).
    lines.push(`${command === '' ? '' : `Failed${command}: `}${readableText(result.error.message)}`);
    lines.push(`Error: ${result.error.code}`);
  } else if (result.status === 'interrupted') {
    const after = `${result.wall_time_seconds.toFixed(1)}s`;
    lines.push(
      result.session_id === undefined
        ? `aborted by user after ${after}`
        : `aborted by user after ${after}; the process is still running with session ID ${result.session_id}`,
    );
  }
  if (result.chunk_id !== undefined) lines.push(`Chunk ID: ${result.chunk_id}`);
  lines.push(`Wall time: ${result.wall_time_seconds.toFixed(4)} seconds`);
  if (result.exit_code !== undefined) lines.push(`Process exited with code ${result.exit_code}`);
  if (result.session_id !== undefined && result.status === 'running')
    lines.push(`Process running with session ID ${result.session_id}`);
  if (result.waiting_for_input === true && result.status === 'running')
    lines.push('Process is waiting for input');
  lines.push(...sandboxLines(result));
  if (result.next_step !== undefined) lines.push(`Next step: ${readableText(result.next_step)}`);
  if (result.original_token_count !== undefined)
    lines.push(`Original token count: ${result.original_token_count}`);
  if (result.original_token_count !== undefined || result.output !== '') {
    lines.push('Output:');
    lines.push(result.output);
  }
  return lines.join('\n');
}

/**
 * The text of a `shell_command` receipt (its own, older shape: `Exit code` first, wall time to a tenth),
 * rendered from the structured result as well: sandbox lines before the output, the next step (a
 * timeout, what to do about a denial) after it.
 */
export function renderShellCommandText(result: ExecResult): string {
  const lines = [
    `Exit code: ${result.exit_code ?? -1}`,
    `Wall time: ${result.wall_time_seconds.toFixed(1)} seconds`,
  ];
  lines.push(...sandboxLines(result));
  lines.push('Output:');
  lines.push(
    `${result.output}${result.next_step === undefined ? '' : `\n${readableText(result.next_step)}`}`,
  );
  return lines.join('\n');
}

/**
 * What the sandbox did and what it blocked, a line each. A notice is one line of ux's (escaped where it
 * was made; again here, which changes nothing then); the output after `Output:` is the command's data,
 * as it wrote it.
 */
function sandboxLines(result: ExecResult): string[] {
  const lines = result.sandbox ? [`Sandbox level: ${sandboxLevelText(result.sandbox)}`] : [];
  lines.push(...(result.sandbox_notices ?? []).map((notice) => `Sandbox: ${readableText(notice)}`));
  if (result.denial) lines.push(`Sandbox denied: ${readableText(result.denial.message)}`);
  else if (result.sandbox_denied) lines.push('Sandbox denied: the sandbox blocked this command');
  return lines;
}

/**
 * `bwrap (file system enforced, network enforced; enforces write_limits, read_deny, …)`, or `none (…)`:
 * the level a command started under, in one line.
 */
export function sandboxLevelText(level: NonNullable<ExecResult['sandbox']>): string {
  if (level.backend === 'none') return 'none (the command ran without a sandbox)';
  const strength = [
    ...(level.file_system ? [`file system ${level.file_system}`] : []),
    ...(level.network ? [`network ${level.network}`] : []),
  ];
  const declared = level.enforces ? [`enforces ${level.enforces.join(', ') || 'nothing'}`] : [];
  const detail = [strength.join(', '), ...declared].filter((part) => part !== '').join('; ');
  const text = detail === '' ? readableText(level.backend) : `${readableText(level.backend)} (${detail})`;
  // A fallback is said: the person configured another backend first.
  const passed = (level.passed_over ?? []).map(
    (passed) => `; preferred ${readableText(passed.backend)} not used: ${readableText(passed.reason)}`,
  );
  return text + passed.join('');
}

/** The text of a receipt, rendered from its structured result. */
export function renderResponseText(parts: ResponseParts): string {
  return renderResultText(renderStructured(parts));
}

/** Output known only as text (a denied attempt's), in the shape responses take. */
export function collectedText(text: string): CollectedOutput {
  const output = new CollectedOutput();
  output.push(Buffer.from(text, 'utf8'));
  return output;
}

/** How much of a command a headline repeats (the result's `command` has all of it). */
export const COMMAND_QUOTE_CHARS = 200;

/**
 * The longest command a result repeats whole: 128 KiB, above what a shell accepts as its one argument
 * on Linux (such a command is refused before it starts). A longer one is not echoed back: the result
 * holds its first 200 characters and its size.
 */
export const COMMAND_RESULT_MAX_BYTES = 128 * 1024;

/** The result's `command`: as the call gave it, unless it is too long to echo back. */
function commandField(command: string): string {
  if (command.length <= COMMAND_QUOTE_CHARS || Buffer.byteLength(command, 'utf8') <= COMMAND_RESULT_MAX_BYTES)
    return command;
  return `${command.slice(0, COMMAND_QUOTE_CHARS)}… (${Buffer.byteLength(command, 'utf8')} bytes)`;
}

const ALREADY_CUT = new RegExp(`^[\\s\\S]{${COMMAND_QUOTE_CHARS}}… \\(\\d+ bytes\\)$`);

/** The command on one line, escaped, cut after 200 characters with its full size. */
function quotedCommand(command: string): string {
  // Short, or a result's command that was already cut (`commandField`): shown as it is.
  if (command.length <= COMMAND_QUOTE_CHARS || ALREADY_CUT.test(command)) return readableText(command);
  return `${readableText(command.slice(0, COMMAND_QUOTE_CHARS))}… (${Buffer.byteLength(command, 'utf8')} bytes)`;
}

function seconds(ms: number): number {
  return Number((Math.max(0, ms) / 1000).toFixed(4));
}
