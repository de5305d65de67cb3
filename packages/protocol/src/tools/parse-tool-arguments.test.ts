import { describe, expect, it } from 'vitest';
import { parseExecCommandArgs, parseShellCommandArgs, parseWriteStdinArgs } from './parse-tool-arguments.js';

function message(result: { success: boolean; error?: { message: string } }): string | undefined {
  return result.success ? undefined : result.error?.message;
}

describe('exec_command arguments', () => {
  it('accepts every documented parameter', () => {
    const result = parseExecCommandArgs(
      {
        cmd: 'ls -la',
        workdir: 'src',
        shell: '/bin/bash',
        tty: true,
        login: false,
        yield_time_ms: 1000,
        max_output_tokens: 500,
        sandbox_permissions: 'require_escalated',
        justification: 'needs network',
        prefix_rule: ['git', 'pull'],
      },
      { additionalPermissions: true },
    );
    expect(result).toEqual({
      success: true,
      data: {
        cmd: 'ls -la',
        workdir: 'src',
        shell: '/bin/bash',
        tty: true,
        login: false,
        yield_time_ms: 1000,
        max_output_tokens: 500,
        sandbox_permissions: 'require_escalated',
        justification: 'needs network',
        prefix_rule: ['git', 'pull'],
      },
    });
  });

  it('accepts the JSON text a model sends', () => {
    expect(parseExecCommandArgs('{"cmd":"echo hi"}')).toEqual({ success: true, data: { cmd: 'echo hi' } });
  });

  it('accepts additional permissions with with_additional_permissions', () => {
    const result = parseExecCommandArgs(
      {
        cmd: 'curl x',
        sandbox_permissions: 'with_additional_permissions',
        additional_permissions: { network: { enabled: true }, file_system: { write: ['out'] } },
      },
      { additionalPermissions: true },
    );
    expect(result.success).toBe(true);
  });

  it.each([
    [{}, 'invalid exec_command arguments: cmd: is required'],
    [{ cmd: '' }, 'invalid exec_command arguments: cmd: must not be empty or only whitespace'],
    [{ cmd: '  \n\t' }, 'invalid exec_command arguments: cmd: must not be empty or only whitespace'],
    [{ cmd: 42 }, 'invalid exec_command arguments: cmd: must be a string (got 42)'],
    [{ cmd: 'ls', tty: 'yes' }, 'invalid exec_command arguments: tty: must be true or false (got "yes")'],
    [
      { cmd: 'ls', yield_time_ms: -5 },
      'invalid exec_command arguments: yield_time_ms: must not be negative (got -5)',
    ],
    [
      { cmd: 'ls', yield_time_ms: 1.5 },
      'invalid exec_command arguments: yield_time_ms: must be a whole number (got 1.5)',
    ],
    [
      { cmd: 'ls', yield_time_ms: '100' },
      'invalid exec_command arguments: yield_time_ms: must be a number (got "100")',
    ],
    [
      { cmd: 'ls', max_output_tokens: -1 },
      'invalid exec_command arguments: max_output_tokens: must not be negative (got -1)',
    ],
    [
      { cmd: 'ls', sandbox_permissions: 'sudo' },
      'invalid exec_command arguments: sandbox_permissions: must be one of "use_default", "require_escalated" (got "sudo")',
    ],
    [{ cmd: 'ls', prefix_rule: [] }, 'invalid exec_command arguments: prefix_rule: must not be empty'],
    [
      { cmd: 'ls', prefix_rule: 'git' },
      'invalid exec_command arguments: prefix_rule: must be an array (got "git")',
    ],
    [{ cmd: 'ls', shell: '' }, 'invalid exec_command arguments: shell: must not be empty'],
    [
      { cmd: 'ls', ttty: true },
      'invalid exec_command arguments: ttty: unknown argument (did you mean "tty"?)',
    ],
    [{ cmd: 'ls', zzzzzzzz: 1 }, 'invalid exec_command arguments: zzzzzzzz: unknown argument'],
    [
      { tty: 1, extra: true },
      'invalid exec_command arguments: cmd: is required; tty: must be true or false (got 1); extra: unknown argument',
    ],
    [[], 'invalid exec_command arguments: arguments must be a JSON object, got an array'],
    [null, 'invalid exec_command arguments: arguments must be a JSON object, got null'],
    ['"ls"', 'invalid exec_command arguments: arguments must be a JSON object, got "ls"'],
  ])('rejects %j with a message naming the problem', (raw, expected) => {
    expect(message(parseExecCommandArgs(raw))).toBe(expected);
  });

  it('names the field that holds a NUL byte, before anything reaches the operating system', () => {
    expect(message(parseExecCommandArgs({ cmd: 'ls', workdir: 'a\0b' }))).toContain(
      'workdir: must not contain a NUL byte',
    );
    expect(message(parseExecCommandArgs({ cmd: 'echo a\0b' }))).toContain('cmd: must not contain a NUL byte');
    expect(message(parseShellCommandArgs({ command: 'ls', workdir: '\0' }))).toContain(
      'workdir: must not contain a NUL byte',
    );
  });

  it('rejects text that is not JSON', () => {
    expect(message(parseExecCommandArgs('{"cmd": '))).toMatch(
      /^invalid exec_command arguments: arguments are not valid JSON \(.+\)$/,
    );
  });

  it('rejects parameters the session does not offer', () => {
    expect(message(parseExecCommandArgs({ cmd: 'ls', shell: '/bin/zsh' }, { shell: false }))).toBe(
      'invalid exec_command arguments: shell: unknown argument',
    );
    expect(message(parseExecCommandArgs({ cmd: 'ls', login: true }, { login: false }))).toBe(
      'invalid exec_command arguments: login: unknown argument',
    );
    expect(message(parseExecCommandArgs({ cmd: 'ls', environment_id: 'remote' }))).toBe(
      'invalid exec_command arguments: environment_id: unknown argument',
    );
    expect(
      message(parseExecCommandArgs({ cmd: 'ls', sandbox_permissions: 'with_additional_permissions' })),
    ).toBe(
      'invalid exec_command arguments: sandbox_permissions: must be one of "use_default", "require_escalated" (got "with_additional_permissions")',
    );
  });

  it('checks that additional permissions and with_additional_permissions come together', () => {
    const variant = { additionalPermissions: true };
    expect(
      message(
        parseExecCommandArgs({ cmd: 'ls', additional_permissions: { network: { enabled: true } } }, variant),
      ),
    ).toBe(
      'invalid exec_command arguments: additional_permissions: is only allowed with sandbox_permissions "with_additional_permissions"',
    );
    expect(
      message(
        parseExecCommandArgs({ cmd: 'ls', sandbox_permissions: 'with_additional_permissions' }, variant),
      ),
    ).toBe(
      'invalid exec_command arguments: additional_permissions: is required with sandbox_permissions "with_additional_permissions"',
    );
    expect(
      message(
        parseExecCommandArgs(
          {
            cmd: 'ls',
            sandbox_permissions: 'with_additional_permissions',
            additional_permissions: { network: { enable: true } },
          },
          variant,
        ),
      ),
    ).toBe(
      'invalid exec_command arguments: additional_permissions.network.enable: unknown argument (did you mean "enabled"?)',
    );
    expect(
      message(
        parseExecCommandArgs(
          {
            cmd: 'ls',
            sandbox_permissions: 'with_additional_permissions',
            additional_permissions: { file_system: { write: ['ok', 7] } },
          },
          variant,
        ),
      ),
    ).toBe(
      'invalid exec_command arguments: additional_permissions.file_system.write[1]: must be a string (got 7)',
    );
  });
});

describe('write_stdin arguments', () => {
  it('accepts a session id with or without characters', () => {
    expect(parseWriteStdinArgs({ session_id: 1000 })).toEqual({ success: true, data: { session_id: 1000 } });
    expect(
      parseWriteStdinArgs({ session_id: 1000, chars: '\u0003', yield_time_ms: 500, max_output_tokens: 10 }),
    ).toEqual({
      success: true,
      data: { session_id: 1000, chars: '\u0003', yield_time_ms: 500, max_output_tokens: 10 },
    });
  });

  it.each([
    [{}, 'invalid write_stdin arguments: session_id: is required'],
    [{ session_id: '1000' }, 'invalid write_stdin arguments: session_id: must be a number (got "1000")'],
    [{ session_id: 10.5 }, 'invalid write_stdin arguments: session_id: must be a whole number (got 10.5)'],
    [{ session_id: -1 }, 'invalid write_stdin arguments: session_id: must not be negative (got -1)'],
    [
      { session_id: 2 ** 31 },
      'invalid write_stdin arguments: session_id: must be at most 2147483647 (got 2147483648)',
    ],
    [{ session_id: 1, chars: 3 }, 'invalid write_stdin arguments: chars: must be a string (got 3)'],
    [
      { session_id: 1, yield_time_ms: -1 },
      'invalid write_stdin arguments: yield_time_ms: must not be negative (got -1)',
    ],
    [{ session_id: 1, input: 'x' }, 'invalid write_stdin arguments: input: unknown argument'],
    [
      { sessionId: 1 },
      'invalid write_stdin arguments: session_id: is required; sessionId: unknown argument (did you mean "session_id"?)',
    ],
  ])('rejects %j with a message naming the problem', (raw, expected) => {
    expect(message(parseWriteStdinArgs(raw))).toBe(expected);
  });
});

describe('shell_command arguments', () => {
  it('accepts a command with a timeout', () => {
    expect(parseShellCommandArgs({ command: 'make', timeout_ms: 5000 })).toEqual({
      success: true,
      data: { command: 'make', timeout_ms: 5000 },
    });
  });

  it('rejects a zero timeout and an empty command', () => {
    expect(message(parseShellCommandArgs({ command: 'make', timeout_ms: 0 }))).toBe(
      'invalid shell_command arguments: timeout_ms: must be positive (got 0)',
    );
    expect(message(parseShellCommandArgs({ command: ' ' }))).toBe(
      'invalid shell_command arguments: command: must not be empty or only whitespace',
    );
  });
});
