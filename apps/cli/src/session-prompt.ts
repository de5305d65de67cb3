import type { UnifiedExec } from '@ux/unified-exec';
import { attachSession } from './attach-session.js';
import type { Terminal } from './terminal.js';

export const SESSION_PROMPT_HELP = `Commands (the two tools, as a model would use them):
  poll [ID] [MS]     write_stdin with no input: wait up to MS ms (default 5000) and show the receipt
  send ID TEXT       write_stdin TEXT (JSON escapes work: \\n, \\u0003 for Ctrl-C, \\u0004 for EOF)
  attach [ID]        stream the session live; Ctrl-] detaches again
  exec CMD           exec_command CMD
  list               the live sessions
  exit               end every session and leave (also Ctrl-D)
ID defaults to the last session used.
`;

export interface PromptState {
  /** The session the commands use when no ID is given. */
  current?: number;
  /** `exec_command` call ids by session, for attach. */
  calls: Map<number, { callId: string; tty: boolean }>;
  nextCall: () => string;
}

/**
 * After a detach: a small prompt on the terminal that drives the same door, so detached sessions can be
 * polled, written to and attached again. Returns when the person leaves.
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
    const trimmed = line.trim();
    if (trimmed === '') continue;
    const [command = '', ...words] = trimmed.split(/\s+/);
    try {
      switch (command) {
        case 'exit':
        case 'quit':
          return;
        case 'help':
          terminal.write(SESSION_PROMPT_HELP);
          break;
        case 'list': {
          const live = door.processes().filter((process) => process.running);
          terminal.write(
            live.length === 0
              ? 'no live sessions\n'
              : `${live.map((p) => `${p.sessionId}  ${p.tty ? 'tty ' : 'pipe'}  ${p.sandbox.padEnd(6)}  ${p.command.join(' ')}`).join('\n')}\n`,
          );
          break;
        }
        case 'poll': {
          const id = sessionId(words[0], state);
          const wait = words[1] === undefined ? 5000 : Number(words[1]);
          if (!Number.isInteger(wait) || wait < 0)
            throw new PromptError(`MS must be a whole number of milliseconds, got "${words[1]}"`);
          const response = await door.writeStdin(
            { session_id: id, yield_time_ms: wait },
            { callId: state.nextCall() },
          );
          terminal.write(`${response.text}\n`);
          break;
        }
        case 'send': {
          const id = sessionId(words[0], state);
          const rest = trimmed.slice(trimmed.indexOf(words[0]!) + words[0]!.length).replace(/^\s/, '');
          const response = await door.writeStdin(
            { session_id: id, chars: decodeEscapes(rest) },
            { callId: state.nextCall() },
          );
          terminal.write(`${response.text}\n`);
          break;
        }
        case 'attach': {
          const id = sessionId(words[0], state);
          const call = state.calls.get(id);
          if (!call) throw new PromptError(`no session ${id} was started here`);
          await attachSession(door, { sessionId: id, callId: call.callId, tty: call.tty }, terminal);
          break;
        }
        case 'exec': {
          const cmd = trimmed.slice('exec'.length).trim();
          if (cmd === '') throw new PromptError('exec needs a command');
          const callId = state.nextCall();
          const response = await door.execCommand({ cmd }, { callId });
          terminal.write(`${response.text}\n`);
          const id = response.result?.session_id;
          if (id !== undefined) {
            state.calls.set(id, { callId, tty: false });
            state.current = id;
          }
          break;
        }
        default:
          throw new PromptError(`unknown command "${command}"; type "help"`);
      }
    } catch (error) {
      if (!(error instanceof PromptError)) throw error;
      terminal.write(`${error.message}\n`);
    }
  }
}

class PromptError extends Error {}

function sessionId(word: string | undefined, state: PromptState): number {
  if (word === undefined) {
    if (state.current === undefined) throw new PromptError('which session? give its ID');
    return state.current;
  }
  if (!/^\d+$/.test(word)) throw new PromptError(`a session ID is a number, got "${word}"`);
  state.current = Number(word);
  return state.current;
}

/** `TEXT` with JSON string escapes; text that is not a valid JSON string body is taken as it is. */
function decodeEscapes(text: string): string {
  try {
    return JSON.parse(`"${text.replace(/"/g, '\\"')}"`) as string;
  } catch {
    return text;
  }
}
