// What `ux exec` shows a person around a command (its end, a refusal, what the sandbox took back) when
// the command's words or the paths it created carry terminal escapes: ux's lines show them as escapes;
// the command's own output stays as it wrote it.
import { RejectedError, type UxEvent } from '@ux/protocol/core';
import type { ToolResponse, UnifiedExec } from '@ux/unified-exec';
import { describe, expect, it } from 'vitest';
import { attachSession } from './attach-session.js';
import { runSessionPrompt } from './session-prompt.js';
import type { Terminal } from './terminal.js';
import { runTerminalView } from './terminal-view.js';

/** A terminal that keeps what is written to it; typed lines come from `lines`. */
function fakeTerminal(lines: string[] = []): Terminal & { shown: string } {
  const terminal = {
    shown: '',
    write(text: string | Uint8Array) {
      terminal.shown += typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
    },
    raw: () => () => {},
    readLine: async (prompt: string) => {
      terminal.shown += prompt;
      return lines.shift() ?? null;
    },
  };
  return terminal as unknown as Terminal & { shown: string };
}

const NOTICE =
  'the command created /w/a\x1b]0;owned\x07\x1b[2J\rSandbox: nothing ran outside the sandbox/.ux (agent metadata); ux moved it';
const NOTICE_SHOWN =
  'the command created /w/a\\e]0;owned\\x07\\e[2J\\rSandbox: nothing ran outside the sandbox/.ux (agent metadata); ux moved it';

function doorAnswering(response: ToolResponse): UnifiedExec {
  return {
    processes: () => [],
    onEvent: () => () => {},
    execCommand: async () => response,
  } as unknown as UnifiedExec;
}

const command = { cmd: 'mkdir .ux', tty: false, callId: 'c1', nextCall: () => 'c2' };

describe('runTerminalView', () => {
  it("shows a notice with escapes and the command's own output as it came", async () => {
    const terminal = fakeTerminal();
    const output = 'plain \x1b[1mbold\x1b[0m\n';
    const code = await runTerminalView(
      doorAnswering({
        text: '(receipt)',
        success: true,
        result: {
          result_version: 1,
          status: 'exited',
          exit_code: 0,
          wall_time_seconds: 0,
          original_token_count: 1,
          output_bytes: output.length,
          output_lines: 1,
          sandbox_notices: [NOTICE],
          output,
        },
      }),
      command,
      terminal,
    );
    expect(code).toBe(0);
    expect(terminal.shown).toContain(output);
    expect(terminal.shown).toContain(`[ux sandbox: ${NOTICE_SHOWN}]\n`);
    expect(terminal.shown).not.toContain('\x1b]0;');
    expect(terminal.shown).not.toContain('\x1b[2J');
  });

  it("words a blocked run as the result's named denial, which the model reads too", async () => {
    const terminal = fakeTerminal();
    const output = "touch: cannot touch '/etc/x': Read-only file system\n";
    const code = await runTerminalView(
      doorAnswering({
        text: '(receipt)',
        success: true,
        result: {
          result_version: 1,
          status: 'exited',
          exit_code: 1,
          wall_time_seconds: 0,
          sandbox_denied: true,
          denial: {
            kind: 'file_write',
            path: '/etc/x',
            message:
              'The sandbox blocked a write to /etc/x\x1b[2J: it is outside the places this command may write.',
          },
          output,
        },
      }),
      command,
      terminal,
    );
    expect(code).toBe(1);
    expect(terminal.shown).toMatch(
      /\[ux: the sandbox blocked a write to \/etc\/x\\e\[2J: it is outside the places this command may write; exit code 1 after \d+\.\d+ s\]\n$/,
    );
  });

  it("names the proxy once on ux's line", async () => {
    const terminal = fakeTerminal();
    await runTerminalView(
      doorAnswering({
        text: '(receipt)',
        success: true,
        result: {
          result_version: 1,
          status: 'exited',
          exit_code: 56,
          wall_time_seconds: 0,
          sandbox_denied: true,
          denial: {
            kind: 'proxy',
            host: 'example.com',
            reason: 'not_in_allow_list',
            message:
              "ux's network proxy refused example.com:443: it is not in the allow list (network.allow).",
          },
          output: 'curl: (56) CONNECT tunnel failed, response 403\n',
        },
      }),
      command,
      terminal,
    );
    expect(terminal.shown).toMatch(
      /\[ux: the network proxy refused example\.com:443: it is not in the allow list \(network\.allow\); exit code 56 after /,
    );
  });

  it('without a named denial, says what the OS said', async () => {
    const terminal = fakeTerminal();
    const output = "touch: cannot touch '/etc/x': Read-only file system\n";
    await runTerminalView(
      doorAnswering({
        text: '(receipt)',
        success: true,
        result: {
          result_version: 1,
          status: 'exited',
          exit_code: 1,
          wall_time_seconds: 0,
          sandbox_denied: true,
          output,
        },
      }),
      command,
      terminal,
    );
    expect(terminal.shown).toMatch(
      /\[ux: blocked by the sandbox \(read-only file system\); exit code 1 after \d+\.\d+ s\]\n$/,
    );
  });

  it('shows a refusal that quotes the command with escapes', async () => {
    const terminal = fakeTerminal();
    const reason = '`touch \x1b[2K\rx` rejected: policy forbids it';
    const code = await runTerminalView(
      doorAnswering({
        text: `exec_command failed for \`bash -lc 'touch \x1b[2K\rx'\`: ${reason}`,
        success: false,
        error: new RejectedError({ reason, source: 'policy' }),
        result: {
          result_version: 1,
          status: 'refused',
          command: 'touch \x1b[2K\rx',
          wall_time_seconds: 0.01,
          refusal: { decided_by: 'rule', reason },
          output: '',
        },
      }),
      command,
      terminal,
    );
    expect(code).toBe(1);
    expect(terminal.shown).toBe('ux: not run: `touch \\e[2K\\rx` rejected: policy forbids it\n');
  });
});

describe('attachSession', () => {
  it('shows a notice that arrives while attached with escapes', async () => {
    const terminal = fakeTerminal();
    let listener: ((event: UxEvent) => void) | undefined;
    const door = {
      processes: () => [{ sessionId: 7, running: true }],
      onEvent: (next: (event: UxEvent) => void) => {
        listener = next;
        return () => {
          listener = undefined;
        };
      },
      writeStdin: async () => ({ text: '', success: true }),
    } as unknown as UnifiedExec;
    const attached = attachSession(door, { sessionId: 7, callId: 'c1', tty: false }, terminal);
    listener!({
      type: 'sandbox_notice',
      call_id: 'c1',
      process_id: '7',
      kind: 'protected_path_undone',
      path: '/w/x',
      message: NOTICE,
    });
    listener!({ type: 'exec_command_end', process_id: '7', exit_code: 0 } as unknown as UxEvent);
    expect(await attached).toEqual({ kind: 'exited', exitCode: 0 });
    expect(terminal.shown).toContain(`\r\n[ux sandbox: ${NOTICE_SHOWN}]\r\n`);
    expect(terminal.shown).not.toContain('\x1b]0;');
  });
});

describe('the ux> prompt', () => {
  it('lists a session whose command carries escapes on one row, and shows a failure with escapes', async () => {
    const terminal = fakeTerminal(['list', 'exec touch y', 'exit']);
    const door = {
      processes: () => [
        {
          sessionId: 1234,
          tty: true,
          environment: 'local',
          sandbox: 'bwrap',
          running: true,
          command: ['bash', '-lc', 'sleep 9 #\r\x1b[2K1235  pipe  local  none     harmless'],
        },
      ],
      execCommand: async () => ({
        text: "exec_command failed for `bash -lc 'touch y\x1b[2J'`: rejected by the user",
        success: false,
      }),
    } as unknown as UnifiedExec;
    await runSessionPrompt(door, terminal, { calls: new Map(), nextCall: () => 'call' });
    expect(terminal.shown).toContain(
      '1234  tty   local  bwrap    bash -lc sleep 9 #\\r\\e[2K1235  pipe  local  none     harmless\n',
    );
    expect(terminal.shown).toContain(
      "exec_command failed for `bash -lc 'touch y\\e[2J'`: rejected by the user\n",
    );
    expect(terminal.shown).not.toMatch(/[\r\x1b]/);
  });
});
