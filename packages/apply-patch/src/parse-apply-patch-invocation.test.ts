import { describe, expect, it } from 'vitest';
import { ApplyPatchError } from './apply-patch-error.js';
import { parseApplyPatchInvocation } from './parse-apply-patch-invocation.js';

const PATCH = '*** Begin Patch\n*** Add File: greeting.txt\n+hello\n*** End Patch';
const heredoc = (prefix: string, delimiter = "'EOF'", end = 'EOF', suffix = '') =>
  `${prefix}apply_patch <<${delimiter}\n${PATCH}\n${end}${suffix}`;

describe('parseApplyPatchInvocation: invocations', () => {
  const cases: Array<{ name: string; command: string | string[]; workdir?: string; line?: number }> = [
    { name: 'argv apply_patch PATCH', command: ['apply_patch', PATCH] },
    { name: 'argv applypatch PATCH', command: ['applypatch', PATCH] },
    {
      name: 'argv with a heredoc-wrapped argument',
      command: ['apply_patch', `<<'EOF'\n${PATCH}\nEOF\n`],
      line: 3,
    },
    { name: "bash -lc with <<'EOF'", command: ['bash', '-lc', heredoc('')] },
    { name: 'bash -c', command: ['bash', '-c', heredoc('')] },
    { name: '/bin/zsh -lc', command: ['/bin/zsh', '-lc', heredoc('')] },
    { name: '/usr/bin/sh -c', command: ['/usr/bin/sh', '-c', heredoc('')] },
    { name: 'the script alone', command: heredoc('') },
    { name: 'a trailing newline after the delimiter', command: heredoc('', "'EOF'", 'EOF', '\n') },
    { name: 'an unquoted delimiter', command: heredoc('', 'EOF') },
    { name: 'a double-quoted delimiter', command: heredoc('', '"EOF"') },
    { name: 'another delimiter', command: heredoc('', "'PATCH'", 'PATCH') },
    { name: 'a space before the delimiter', command: heredoc('', " 'EOF'") },
    {
      name: '<<- strips leading tabs',
      command: `apply_patch <<-'EOF'\n\t${PATCH.replaceAll('\n', '\n\t')}\n\tEOF`,
    },
    { name: 'the applypatch alias in a script', command: `applypatch <<'EOF'\n${PATCH}\nEOF` },
    { name: 'cd DIR && first', command: heredoc('cd sub/dir && '), workdir: 'sub/dir' },
    { name: 'cd with a single-quoted path', command: heredoc("cd 'my dir' && "), workdir: 'my dir' },
    { name: 'cd with a double-quoted path', command: heredoc('cd "my dir" && '), workdir: 'my dir' },
    {
      name: 'cd with an absolute path',
      command: ['bash', '-lc', heredoc('cd /srv/app && ')],
      workdir: '/srv/app',
    },
    { name: 'the patch as a single-quoted argument', command: `apply_patch '${PATCH}'` },
    { name: 'the patch as a double-quoted argument', command: `apply_patch "${PATCH}"` },
    { name: 'leading whitespace in the script', command: `\n  ${heredoc('')}` },
  ];

  it.each(cases)('$name', ({ command, workdir, line }) => {
    const result = parseApplyPatchInvocation(command);
    if (result === undefined || ApplyPatchError.isInstance(result))
      throw new Error(`not recognised: ${String(result)}`);
    expect(result.parsed.operations).toEqual([
      { kind: 'add', path: 'greeting.txt', contents: 'hello\n', line: line ?? 2 },
    ]);
    expect(result.workdir).toBe(workdir);
    expect(result.patch).toContain('*** Add File: greeting.txt');
  });
});

describe('parseApplyPatchInvocation: not an invocation', () => {
  const cases: Array<{ name: string; command: string | string[] }> = [
    { name: 'an ordinary command', command: ['ls', '-la'] },
    { name: 'an ordinary script', command: ['bash', '-lc', 'echo hi'] },
    { name: 'an empty argv', command: [] },
    { name: 'apply_patch with no argument', command: ['apply_patch'] },
    { name: 'apply_patch with two arguments', command: ['apply_patch', PATCH, 'extra'] },
    { name: 'another shell', command: ['fish', '-c', heredoc('')] },
    { name: 'another flag', command: ['bash', '-x', heredoc('')] },
    { name: 'extra arguments after the script', command: ['bash', '-c', heredoc(''), 'arg0'] },
    { name: 'cd; instead of &&', command: heredoc('cd foo; ') },
    { name: 'cd || instead of &&', command: heredoc('cd foo || ') },
    { name: 'cd | instead of &&', command: heredoc('cd foo | ') },
    { name: 'two cd commands', command: heredoc('cd a && cd b && ') },
    { name: 'cd with two arguments', command: heredoc('cd a b && ') },
    { name: 'cd with a variable', command: heredoc('cd $HOME && ') },
    { name: 'cd with a tilde', command: heredoc('cd ~/src && ') },
    { name: 'another command first', command: heredoc('echo go && ') },
    { name: 'a command after the heredoc', command: heredoc('', "'EOF'", 'EOF', '\necho done') },
    { name: '&& after the heredoc terminator', command: heredoc('', "'EOF'", 'EOF', ' && echo done') },
    { name: 'a redirection after the heredoc start', command: `apply_patch <<'EOF' > log\n${PATCH}\nEOF` },
    { name: 'an argument before the heredoc', command: `apply_patch foo <<'EOF'\n${PATCH}\nEOF` },
    { name: 'an unterminated heredoc', command: `apply_patch <<'EOF'\n${PATCH}\n` },
    { name: 'a similar name', command: heredoc('').replace('apply_patch', 'apply_patches') },
    { name: 'a pipe into apply_patch', command: `cat p.diff | apply_patch` },
    { name: 'a double-quoted argument the shell would expand', command: `apply_patch "${PATCH}$HOME"` },
  ];

  it.each(cases)('$name', ({ command }) => {
    expect(parseApplyPatchInvocation(command)).toBeUndefined();
  });
});

describe('parseApplyPatchInvocation: malformed invocations', () => {
  it('returns the parse error of a malformed patch', () => {
    const result = parseApplyPatchInvocation([
      'bash',
      '-lc',
      "apply_patch <<'EOF'\n*** Begin Patch\n*** Frob: x\n*** End Patch\nEOF",
    ]);
    expect(ApplyPatchError.isInstance(result)).toBe(true);
    expect((result as ApplyPatchError).reason).toBe('invalid_hunk');
    expect((result as ApplyPatchError).line).toBe(2);
  });

  it('returns the parse error of an argv patch', () => {
    const result = parseApplyPatchInvocation(['apply_patch', 'not a patch']);
    expect((result as ApplyPatchError).message).toBe("The first line of the patch must be '*** Begin Patch'");
  });

  it.each([
    { name: 'a bare patch as the whole argv', command: [PATCH] },
    { name: 'a bare patch as the shell script', command: ['bash', '-lc', PATCH] },
    { name: 'a bare patch as the command string', command: PATCH },
  ])('refuses $name without apply_patch', ({ command }) => {
    const result = parseApplyPatchInvocation(command);
    expect(ApplyPatchError.isInstance(result)).toBe(true);
    expect((result as ApplyPatchError).reason).toBe('implicit_invocation');
    expect((result as ApplyPatchError).message).toBe(
      'patch detected without explicit call to apply_patch. Rerun as ["apply_patch", "<patch>"]',
    );
  });
});
