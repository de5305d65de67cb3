import { execResultSchema } from '@ux/protocol';
import { describe, expect, it } from 'vitest';
import {
  COMMAND_QUOTE_CHARS,
  collectedText,
  renderNotRun,
  renderResponseText,
  renderResultText,
  renderShellCommandText,
  renderStructured,
  sandboxLevelText,
} from './render-response.js';

describe('the receipt', () => {
  const output = 'out \x1b[1mbold\x1b[0m\r\nSandbox: printed by the command\n';
  const parts = {
    chunkId: 'abc123',
    wallTimeMs: 1000,
    exitCode: 0,
    output: collectedText(output),
    maxTokens: 10_000,
    notices: ['the command created /w/a\x1b[2J\r/.ux; ux removed it'],
  };

  it("shows a notice as one line with escapes, and the command's output as it wrote it", () => {
    const text = renderResponseText(parts);
    expect(text).toBe(
      [
        'Chunk ID: abc123',
        'Wall time: 1.0000 seconds',
        'Process exited with code 0',
        'Sandbox: the command created /w/a\\e[2J\\r/.ux; ux removed it',
        'Original token count: 13',
        'Output:',
        output,
      ].join('\n'),
    );
  });

  it('carries the escaped notice, and the raw output, in the structured result', () => {
    const result = renderStructured(parts);
    expect(result.sandbox_notices).toEqual(['the command created /w/a\\e[2J\\r/.ux; ux removed it']);
    expect(result.output).toBe(output);
  });
});

describe('one result, two renderings', () => {
  const parts = { chunkId: 'c0ffee', maxTokens: 10_000 };

  it('names a denial and says what to do next, in both renderings', () => {
    const result = renderStructured({
      ...parts,
      wallTimeMs: 20,
      command: 'touch /etc/x',
      exitCode: 1,
      output: collectedText('touch: cannot touch /etc/x: Read-only file system\n'),
      sandboxDenied: true,
      denial: { kind: 'file_write', message: 'The sandbox blocked a write to /etc/x.', path: '/etc/x' },
      nextStep: 'Ask for require_escalated.',
    });
    expect(result).toMatchObject({
      status: 'exited',
      command: 'touch /etc/x',
      sandbox_denied: true,
      denial: { kind: 'file_write', path: '/etc/x' },
      next_step: 'Ask for require_escalated.',
    });
    expect(renderResultText(result).split('\n')).toEqual([
      'Chunk ID: c0ffee',
      'Wall time: 0.0200 seconds',
      'Process exited with code 1',
      'Sandbox denied: The sandbox blocked a write to /etc/x.',
      'Next step: Ask for require_escalated.',
      'Original token count: 13',
      'Output:',
      'touch: cannot touch /etc/x: Read-only file system',
      '',
    ]);
  });

  it('tells how to poll, type into and stop a running process', () => {
    const result = renderStructured({
      ...parts,
      wallTimeMs: 1000,
      sessionId: 1000,
      tty: true,
      output: collectedText(''),
    });
    expect(result.status).toBe('running');
    expect(result.next_step).toContain('write_stdin with session_id 1000');
    expect(result.next_step).toContain('"\\u0003"');
    expect(result.next_step).toContain('type into it');
    const text = renderResultText(result);
    expect(text).toContain('Process running with session ID 1000\n');
    expect(text).toContain(`Next step: ${result.next_step}\n`);
    const pipe = renderStructured({
      ...parts,
      wallTimeMs: 1,
      sessionId: 7,
      tty: false,
      output: collectedText(''),
    });
    expect(pipe.next_step).toContain('no stdin');
  });

  it('says a running process waits for input, in the field and a line, with a next step to type', () => {
    const result = renderStructured({
      ...parts,
      wallTimeMs: 300,
      sessionId: 1000,
      tty: true,
      waitingForInput: true,
      output: collectedText('>>> '),
    });
    expect(execResultSchema.parse(result)).toEqual(result);
    expect(result).toMatchObject({ status: 'running', session_id: 1000, waiting_for_input: true });
    expect(result.next_step).toContain('waiting for input');
    expect(result.next_step).toContain('chars to type into it');
    const text = renderResultText(result);
    expect(text).toContain('Process running with session ID 1000\nProcess is waiting for input\n');
    expect(text).toContain(`Next step: ${result.next_step}\n`);
    // Not running any more (exited, or the wait interrupted): no such claim.
    const exited = renderStructured({
      ...parts,
      wallTimeMs: 300,
      exitCode: 0,
      waitingForInput: true,
      output: collectedText(''),
    });
    expect(exited.waiting_for_input).toBeUndefined();
    expect(renderResultText(exited)).not.toContain('waiting for input');
    const stopped = renderStructured({
      ...parts,
      wallTimeMs: 300,
      sessionId: 3,
      interrupted: true,
      waitingForInput: true,
      output: collectedText(''),
    });
    expect(stopped.waiting_for_input).toBeUndefined();
    // Not waiting: the usual running lines only.
    const busy = renderStructured({
      ...parts,
      wallTimeMs: 300,
      sessionId: 1000,
      tty: true,
      output: collectedText(''),
    });
    expect(busy.waiting_for_input).toBeUndefined();
    expect(renderResultText(busy)).not.toContain('waiting for input');
  });

  it('marks truncated output in the structured result only when the text shows part of it', () => {
    const long = collectedText(`${'x'.repeat(400)}\n`);
    expect(
      renderStructured({ ...parts, wallTimeMs: 0, exitCode: 0, output: long, maxTokens: 10 }),
    ).toMatchObject({
      output_truncated: true,
    });
    expect(
      renderStructured({ ...parts, wallTimeMs: 0, exitCode: 0, output: long, maxTokens: 1000 })
        .output_truncated,
    ).toBeUndefined();
  });

  it('renders a refusal: the command as given, who decided, why, and the next step', () => {
    const result = renderNotRun({
      status: 'refused',
      wallTimeMs: 1234,
      command: 'rm -rf build',
      refusal: { decided_by: 'person', reason: 'rejected by the user' },
      nextStep: 'Do something else.',
    });
    expect(execResultSchema.parse(result)).toEqual(result);
    expect(renderResultText(result)).toBe(
      [
        'Not run `rm -rf build`: rejected by the user',
        'Refused by: the person (person)',
        'Wall time: 1.2340 seconds',
        'Next step: Do something else.',
      ].join('\n'),
    );
  });

  it('renders a failure with its code, and quotes a command with escapes', () => {
    const result = renderNotRun({
      status: 'failed',
      wallTimeMs: 3,
      command: 'echo \x1b[2J',
      error: { code: 'invalid_arguments', message: 'invalid exec_command arguments: yield_time_ms: too big' },
    });
    expect(renderResultText(result)).toBe(
      [
        'Failed `echo \\e[2J`: invalid exec_command arguments: yield_time_ms: too big',
        'Error: invalid_arguments',
        'Wall time: 0.0030 seconds',
      ].join('\n'),
    );
  });

  it('renders an interrupted wait, with the session that keeps running', () => {
    const result = renderNotRun({
      status: 'interrupted',
      wallTimeMs: 1250,
      sessionId: 1000,
      nextStep: 'Poll it.',
    });
    expect(renderResultText(result)).toBe(
      [
        'aborted by user after 1.3s; the process is still running with session ID 1000',
        'Wall time: 1.2500 seconds',
        'Next step: Poll it.',
      ].join('\n'),
    );
  });

  it('gives every kind of result a text line for each field a model needs, and each validates', () => {
    const results = [
      renderStructured({
        ...parts,
        wallTimeMs: 5,
        exitCode: 0,
        output: collectedText('ok\n'),
        notices: ['n'],
      }),
      renderStructured({ ...parts, wallTimeMs: 5, sessionId: 3, output: collectedText('') }),
      renderNotRun({
        status: 'refused',
        wallTimeMs: 1,
        command: 'x',
        refusal: { decided_by: 'nobody', reason: 'r' },
      }),
      renderNotRun({
        status: 'failed',
        wallTimeMs: 1,
        error: { code: 'unknown_session', message: 'write_stdin failed: Unknown process id 4' },
      }),
      renderNotRun({ status: 'interrupted', wallTimeMs: 1 }),
    ];
    for (const result of results) {
      expect(execResultSchema.parse(result)).toEqual(result);
      const text = renderResultText(result);
      expect(text).toContain(`Wall time: ${result.wall_time_seconds.toFixed(4)} seconds`);
      if (result.exit_code !== undefined)
        expect(text).toContain(`Process exited with code ${result.exit_code}`);
      if (result.status === 'running')
        expect(text).toContain(`Process running with session ID ${result.session_id}`);
      for (const notice of result.sandbox_notices ?? []) expect(text).toContain(`Sandbox: ${notice}`);
      if (result.refusal) expect(text).toContain(result.refusal.reason);
      if (result.error) expect(text).toContain(`Error: ${result.error.code}`);
      if (result.next_step) expect(text).toContain(`Next step: ${result.next_step}`);
      if (result.command) expect(text).toContain(`\`${result.command}\``);
    }
  });

  it('renders shell_command receipts in their own shape from the same result', () => {
    const result = renderStructured({
      chunkId: '',
      wallTimeMs: 10_000,
      command: 'sleep 20',
      exitCode: 124,
      output: collectedText(''),
      maxTokens: 100,
      nextStep: 'command timed out after 10000 ms; its process group was killed',
    });
    expect(renderShellCommandText(result)).toBe(
      'Exit code: 124\nWall time: 10.0 seconds\nOutput:\n\ncommand timed out after 10000 ms; its process group was killed',
    );
  });
});

describe('the command in a headline', () => {
  const refused = (command: string) =>
    renderResultText(
      renderNotRun({
        status: 'refused',
        wallTimeMs: 0,
        command,
        refusal: { decided_by: 'rule', reason: 'no' },
      }),
    ).split('\n')[0]!;

  it('is quoted as typed, one line, with control characters as escapes', () => {
    expect(refused('echo hi')).toBe('Not run `echo hi`: no');
    expect(refused('touch x #\r\x1b[2K  ok\nls')).toBe('Not run `touch x #\\r\\e[2K  ok\\nls`: no');
  });

  it('is cut after 200 characters with its size, while the result keeps all of it', () => {
    const command = 'y'.repeat(5_000_000);
    const line = refused(command);
    expect(line).toMatch(/^Not run `y+… \(5000000 bytes\)`: no$/);
    expect(line.length).toBeLessThan(COMMAND_QUOTE_CHARS + 50);
  });
});

describe('a command too long to echo back', () => {
  it('is cut in the result and quoted once, with its real size, in the text', () => {
    const result = renderNotRun({
      status: 'failed',
      wallTimeMs: 0,
      command: 'z'.repeat(200_000),
      error: { code: 'invalid_arguments', message: 'too long' },
    });
    expect(result.command).toBe(`${'z'.repeat(200)}… (200000 bytes)`);
    expect(renderResultText(result).split('\n')[0]).toBe(
      `Failed \`${'z'.repeat(200)}… (200000 bytes)\`: too long`,
    );
    const patch = `apply_patch <<'EOF'\n${'+line\n'.repeat(10_000)}EOF`;
    expect(
      renderNotRun({
        status: 'refused',
        wallTimeMs: 0,
        command: patch,
        refusal: { decided_by: 'policy', reason: 'r' },
      }).command,
    ).toBe(patch);
  });
});

describe('the level a command started under', () => {
  const level = {
    backend: 'bwrap',
    enforces: ['write_limits', 'protected_names', 'read_deny', 'network_off'] as const,
    file_system: 'enforced' as const,
    network: 'enforced' as const,
  };

  it('is a field of the result and a line of both texts, from the same field', () => {
    const result = renderStructured({
      chunkId: 'c0ffee',
      wallTimeMs: 10,
      exitCode: 0,
      output: collectedText('ok\n'),
      maxTokens: 10_000,
      sandbox: { ...level, enforces: [...level.enforces] },
    });
    expect(execResultSchema.parse(result).sandbox).toEqual(level);
    const line =
      'Sandbox level: bwrap (file system enforced, network enforced; enforces write_limits, protected_names, read_deny, network_off)';
    expect(renderResultText(result).split('\n')).toContain(line);
    expect(renderShellCommandText(result).split('\n')).toContain(line);
  });

  it('says plainly when a command ran without a sandbox, or when a remote server did not say what it enforces', () => {
    expect(sandboxLevelText({ backend: 'none' })).toBe('none (the command ran without a sandbox)');
    expect(sandboxLevelText({ backend: 'linuxSeccomp', file_system: 'enforced', network: 'advisory' })).toBe(
      'linuxSeccomp (file system enforced, network advisory)',
    );
    expect(sandboxLevelText({ backend: 'toy', enforces: [] })).toBe('toy (enforces nothing)');
    expect(
      sandboxLevelText({
        backend: 'landlock',
        enforces: ['write_limits'],
        passed_over: [{ backend: 'bwrap', reason: 'cannot run here: no user namespaces' }],
      }),
    ).toBe('landlock (enforces write_limits); preferred bwrap not used: cannot run here: no user namespaces');
  });

  it('is absent from results that started nothing', () => {
    const result = renderStructured({
      chunkId: 'c0ffee',
      wallTimeMs: 10,
      sessionId: 3,
      output: collectedText(''),
      maxTokens: 10_000,
    });
    expect(result.sandbox).toBeUndefined();
    expect(renderResultText(result)).not.toContain('Sandbox level');
  });
});
