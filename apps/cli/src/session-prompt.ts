import { didYouMean } from '@ux/protocol/core';
import { readableText } from '@ux/protocol-utils';
import type { ProcessInfo, UnifiedExec } from '@ux/unified-exec';
import { attachSession } from './attach-session.js';
import type { Terminal } from './terminal.js';

export const SESSION_PROMPT_HELP = `Commands (the two tools, as a model would use them):
  poll [ID] [MS]     write_stdin with no input: wait up to MS ms (default 5000) and show the receipt
  send ID TEXT       write_stdin TEXT (JSON escapes work: \\n, \\u0003 for Ctrl-C, \\u0004 for EOF)
  attach [ID]        stream the session live; Ctrl-] detaches again
  exec CMD           exec_command CMD
  list               the live sessions: ID, MODE (tty or pipe), WHERE (local or the environment), SANDBOX, COMMAND
  clean              end every session and stay (the model's CleanBackgroundTerminals)
  exit               end every session and leave (also Ctrl-D)
ID defaults to the last session used.
`;

const COMMANDS = ['poll', 'send', 'attach', 'exec', 'list', 'clean', 'help', 'exit', 'quit'];

export interface PromptState {
  /** The session the commands use when no ID is given. */
  current?: number;
  /** `exec_command` call ids by session, for attach. */
  calls: Map<number, { callId: string; tty: boolean }>;
  nextCall: () => string;
}

/**
 * After a detach: a small prompt on the terminal that drives the same door, so detached sessions can be
 * polled, written to and attached again. Returns when the person leaves. A command that fails, however
 * it fails, is reported as one line and the prompt goes on: leaving ends every session.
 */
export async function runSessionPrompt(
  door: UnifiedExec,
  terminal: Terminal,
  state: PromptState,
): Promise<void> {
  terminal.write(`Type "help" for commands.\n`);
  for (;;) {
    const line = await terminal.readLine('ux> ');
    if (line === null) {
      terminal.write('\n');
      return;
    }
    const [, command = '', rest = ''] = /^\s*(\S*)\s?(.*)$/s.exec(line) ?? [];
    if (command === '') continue;
    try {
      if ((await runCommand(door, terminal, state, command, rest)) === 'leave') return;
    } catch (error) {
      terminal.write(
        error instanceof PromptError
          ? `${error.message}\n`
          : `${command} failed: ${error instanceof Error ? error.message : String(error)}; the sessions keep running\n`,
      );
    }
  }
}

/** One prompt command; `rest` is the line after the command word and one blank, as typed. */
async function runCommand(
  door: UnifiedExec,
  terminal: Terminal,
  state: PromptState,
  command: string,
  rest: string,
): Promise<'leave' | undefined> {
  const words = rest.trim() === '' ? [] : rest.trim().split(/\s+/);
  switch (command) {
    case 'exit':
    case 'quit':
      return 'leave';
    case 'help':
      terminal.write(SESSION_PROMPT_HELP);
      return;
    case 'list':
      noMoreThan(words, 0, 'list takes no arguments');
      terminal.write(listText(door.processes().filter((process) => process.running)));
      return;
    case 'clean': {
      noMoreThan(words, 0, 'clean takes no arguments');
      const running = door.processes().filter((process) => process.running);
      await door.cleanBackgroundTerminals();
      state.current = undefined;
      terminal.write(
        running.length === 0
          ? 'no session was running\n'
          : `ended ${running.length === 1 ? 'session' : 'sessions'} ${running.map((process) => process.sessionId).join(', ')}\n`,
      );
      return;
    }
    case 'poll': {
      noMoreThan(words, 2, 'usage: poll [ID] [MS]');
      const id = sessionId(words[0], door, state);
      const wait = words[1] === undefined ? 5000 : milliseconds(words[1]);
      const response = await door.writeStdin(
        { session_id: id, yield_time_ms: wait },
        { callId: state.nextCall() },
      );
      terminal.write(`${shownResponse(response)}\n`);
      return;
    }
    case 'send': {
      // TEXT is the rest of the line as typed, blanks included: only the ID is a word of its own.
      const [, word, text = ''] = /^\s*(\S+)\s?(.*)$/s.exec(rest) ?? [];
      const last = state.current === undefined ? '' : ` (the last session is ${state.current})`;
      if (word === undefined) throw new PromptError(`usage: send ID TEXT${last}`);
      if (!/^-?\d+$/.test(word))
        throw new PromptError(`send needs the session ID first, got "${word}"; usage: send ID TEXT${last}`);
      const id = sessionId(word, door, state);
      if (text === '') throw new PromptError('send needs TEXT after the ID; to wait for output, use poll');
      const response = await door.writeStdin(
        { session_id: id, chars: decodeEscapes(text) },
        { callId: state.nextCall() },
      );
      terminal.write(`${shownResponse(response)}\n`);
      return;
    }
    case 'attach': {
      noMoreThan(words, 1, 'usage: attach [ID]');
      const id = sessionId(words[0], door, state);
      const call = state.calls.get(id);
      if (!call) throw new PromptError(`no session ${id} was started here; "list" shows the live ones`);
      await attachSession(door, { sessionId: id, callId: call.callId, tty: call.tty }, terminal);
      return;
    }
    case 'exec': {
      const cmd = rest.trim();
      if (cmd === '') throw new PromptError('usage: exec CMD');
      // `bash -lc -x` would read the script as an option of its own.
      if (cmd.startsWith('-'))
        throw new PromptError(
          `"${cmd.split(/\s/)[0]}" is not a command: a shell would take it for an option`,
        );
      const callId = state.nextCall();
      const response = await door.execCommand({ cmd }, { callId });
      terminal.write(`${shownResponse(response)}\n`);
      const id = response.result?.session_id;
      if (id !== undefined) {
        state.calls.set(id, { callId, tty: false });
        state.current = id;
      }
      return;
    }
    default:
      throw new PromptError(`unknown command "${command}"${didYouMean(command, COMMANDS)}; type "help"`);
  }
}

/**
 * A receipt as it is (its output is the command's data, shown as the command wrote it; its notices
 * are escaped where they are made); a failure, which is ux's own line quoting the command's words,
 * with escapes instead of control characters.
 */
function shownResponse(response: { text: string; success: boolean }): string {
  // A failure's text is ux's own lines, each of which may quote the command: escaped line by line.
  return response.success ? response.text : response.text.split('\n').map(readableText).join('\n');
}

/**
 * A mistake in what was typed: shown as it is, without the "failed" of an unexpected error. A plain
 * `Error` on purpose: it is private to this module, thrown and caught inside the prompt loop, and
 * never reaches a caller, so it needs no code or marker.
 */
class PromptError extends Error {}

function noMoreThan(words: readonly string[], count: number, usage: string): void {
  if (words.length > count) throw new PromptError(`unexpected "${words[count]}"; ${usage}`);
}

/** The live sessions as a table; every session ID has at least 4 digits, so the header never widens it. */
function listText(live: readonly ProcessInfo[]): string {
  if (live.length === 0) return 'no live sessions\n';
  const rows = [
    ['ID', 'MODE', 'WHERE', 'SANDBOX', 'COMMAND'],
    ...live.map((p) => [
      String(p.sessionId),
      p.tty ? 'tty' : 'pipe',
      readableText(p.environment),
      readableText(p.sandbox),
      // The command's words: a control character in them would rewrite the table.
      readableText(p.command.join(' ')),
    ]),
  ];
  const widths = [0, 1, 2, 3].map((column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column < 4 ? cell.padEnd(widths[column]!) : cell))
        .join('  ')
        .trimEnd(),
    )
    .map((row) => `${row}\n`)
    .join('');
}

function sessionId(word: string | undefined, door: UnifiedExec, state: PromptState): number {
  if (word === undefined) {
    if (state.current === undefined) throw new PromptError('which session? give its ID ("list" shows them)');
    return state.current;
  }
  if (/^-\d+$/.test(word)) throw new PromptError(`a session ID is a positive number, got "${word}"`);
  if (!/^\d+$/.test(word) || !Number.isSafeInteger(Number(word)))
    throw new PromptError(`a session ID is a number like those "list" shows, got "${word}"`);
  const id = Number(word);
  // Only a session that exists becomes the default: a mistyped ID must not stick.
  if (door.processes().some((process) => process.sessionId === id)) state.current = id;
  return id;
}

function milliseconds(word: string): number {
  if (/^-\d+$/.test(word)) throw new PromptError(`MS must not be negative, got "${word}"`);
  if (!/^\d+$/.test(word) || !Number.isSafeInteger(Number(word)))
    throw new PromptError(`MS must be a whole number of milliseconds, got "${word}"`);
  return Number(word);
}

/** `TEXT` with JSON string escapes; text that is not a valid JSON string body is taken as it is. */
function decodeEscapes(text: string): string {
  try {
    return JSON.parse(`"${text.replace(/"/g, '\\"')}"`) as string;
  } catch {
    return text;
  }
}
