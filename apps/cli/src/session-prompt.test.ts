import type { UnifiedExec } from '@ux/unified-exec';
import { describe, expect, it } from 'vitest';
import { runSessionPrompt } from './session-prompt.js';
import type { Terminal } from './terminal.js';

/** A terminal that is typed `lines` and keeps what the prompt shows. */
function scriptedTerminal(lines: string[]): Terminal & { shown: string } {
  const terminal = {
    shown: '',
    write(text: string) {
      terminal.shown += text;
    },
    readLine: async (prompt: string) => {
      terminal.shown += prompt;
      return lines.shift() ?? null;
    },
  };
  return terminal as unknown as Terminal & { shown: string };
}

describe('runSessionPrompt', () => {
  // The prompt's own checks stop every mistake found so far; this is the net under the ones not found.
  it('reports a command that throws as one line and goes on, so no session is ended by it', async () => {
    const door = {
      processes: () => [],
      writeStdin: async () => {
        throw new TypeError("Cannot read properties of undefined (reading 'length')");
      },
    } as unknown as UnifiedExec;
    const terminal = scriptedTerminal(['poll 1234 0', 'list', 'exit']);
    await runSessionPrompt(door, terminal, { calls: new Map(), nextCall: () => 'call' });
    expect(terminal.shown).toContain(
      "ux> poll failed: Cannot read properties of undefined (reading 'length'); the sessions keep running\nux> no live sessions\nux> ",
    );
  });
});
