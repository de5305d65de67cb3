import { useLeakCheck } from '@ux/test-utils';
import { describe, expect, it } from 'vitest';
import { makeHome, runUx } from './cli-harness.js';

useLeakCheck();

/** Runs `ux args…` and expects a usage error that says `message` and ran nothing. */
async function usageError(args: string[], message: string): Promise<void> {
  const result = await runUx(args, makeHome());
  expect(result.stderr).toContain(message);
  expect(result.status).toBe(2);
  expect(result.stdout).toBe('');
}

const COMMANDS = ['exec', 'sandbox', 'doctor', 'mcp', 'exec-server', 'features'];

describe('ux: commands and help', () => {
  it.each([
    [['exce'], 'ux: unknown command "exce" (did you mean "exec"?)\n'],
    [['doctr'], 'ux: unknown command "doctr" (did you mean "doctor"?)\n'],
    [
      ['ls', '-la'],
      'ux: unknown command "ls" (did you mean "ps"?); to run it as a command: ux exec -- ls -la\n',
    ],
    [['--verison'], 'ux: unknown option --verison (did you mean "--version"?)\n'],
    [['toString'], 'ux: unknown command "toString"; to run it as a command: ux exec -- toString\n'],
    [
      ['help', 'nonsense'],
      'ux: no help for "nonsense": not a ux command; the commands are exec, sandbox, doctor, mcp, exec-server, features, zsh-fork, ps, attach, kill, apply-patch, approvals\n',
    ],
    [['help', 'exce'], 'ux: no help for "exce": not a ux command (did you mean "exec"?)'],
    [['help', 'exec', 'now'], 'ux: unexpected argument "now"; usage: ux help [COMMAND]'],
  ])('%j is a usage error with a hint', async (args, message) => {
    await usageError(args, message);
  });

  it.each(COMMANDS)("ux help %s shows that command's own help", async (command) => {
    const home = makeHome();
    const help = await runUx(['help', command], home);
    expect(help.stderr).toBe('');
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(new RegExp(`^Usage: ux ${command}[ \\n]`));
    expect(help.stdout).toBe((await runUx([command, '--help'], home)).stdout);
  });

  it('ux help alone, and ux help help, show the overview that lists help', async () => {
    const home = makeHome();
    for (const args of [['help'], ['help', 'help']]) {
      const result = await runUx(args, home);
      expect(result.status).toBe(0);
      expect(result.stdout).toContain('Usage: ux <command> [options]');
      expect(result.stdout).toMatch(/^ {2}help \[COMMAND\] +this help, or COMMAND's own/m);
    }
  });
});

describe('ux exec and ux sandbox: options and the command after --', () => {
  it.each([
    [
      ['exec', 'ls', '-la'],
      'ux: unknown option -l; to run a command with options, put it after --: ux exec -- ls -la\n',
    ],
    [
      ['exec', '--tty', '--cwd', '.', 'grep', '-r', 'a b', '.'],
      "ux: unknown option -r; to run a command with options, put it after --: ux exec --tty --cwd . -- grep -r 'a b' .\n",
    ],
    [['sandbox', 'ls', '-la'], 'to run a command with options, put it after --: ux sandbox -- ls -la\n'],
    // Without a word before it, an unknown option is a typo of one of ux's own.
    [['exec', '--ttty', '--', 'true'], 'ux: unknown option --ttty (did you mean "--tty"?)\n'],
    // ux doctor runs no command: no advice about --.
    [['doctor', 'now', '-x'], 'ux: unknown option -x\n'],
    // A misspelt ux option with a value, before the command: the close match, not "put it after --".
    [
      ['exec', '--aproval', 'never', '--', 'ls'],
      'ux: unknown option --aproval (did you mean "--approval"?)\n',
    ],
    [['sandbox', '--sandbx', 'read-only', 'ls'], 'ux: unknown option --sandbx (did you mean "--sandbox"?)\n'],
    [['mcp', '--aproval', 'never'], 'ux: unknown option --aproval (did you mean "--approval"?)\n'],
    [['doctor', '--jsn'], 'ux: unknown option --jsn (did you mean "--json"?)\n'],
    [['zsh-fork', 'status', '--jsno'], 'ux: unknown option --jsno (did you mean "--json"?)\n'],
    [['features', 'list', '--enabel', 'x'], 'ux: unknown option --enabel (did you mean "--enable"?)\n'],
    // Codex's spellings get ux's.
    [
      ['exec', '-p', 'work', '--', 'ls'],
      "ux: unknown option -p; Codex's -p PROFILE is --profile PROFILE in ux: ux exec --profile work -- ls\n",
    ],
    [
      ['exec', '--enable', 'unified_exec', '--', 'ls'],
      "ux: unknown option --enable; Codex's --enable FEATURE is -c features.FEATURE=true in ux: ux exec -c features.unified_exec=true -- ls\n",
    ],
    [
      ['exec', '-C', '/tmp', '--', 'ls'],
      "ux: unknown option -C; Codex's -C DIR is --cwd DIR in ux: ux exec --cwd /tmp -- ls\n",
    ],
    [
      ['doctor', '-C', '/tmp'],
      "ux: unknown option -C (Codex's -C DIR is --cwd DIR in ux, which ux doctor does not take: cd to the directory first, then run ux doctor)\n",
    ],
  ])('%j says where the option belongs', async (args, message) => {
    await usageError(args, message);
  });

  it.each([
    [
      ['--yield-ms', '-5'],
      '--yield-ms must not be negative (a non-negative integer of milliseconds), got "-5"',
    ],
    [['--yield-ms=-5'], '--yield-ms must not be negative (a non-negative integer of milliseconds), got "-5"'],
    [
      ['--yield-ms', '-0.5'],
      '--yield-ms must not be negative (a non-negative integer of milliseconds), got "-0.5"',
    ],
    [['--yield-ms=abc'], '--yield-ms must be a non-negative integer of milliseconds, got "abc"'],
    [
      ['--yield-ms', '1e3'],
      '--yield-ms must be written with digits only (a non-negative integer of milliseconds), got "1e3" (did you mean 1000?)',
    ],
    [
      ['--yield-ms', '2.5'],
      '--yield-ms must be a whole number (a non-negative integer of milliseconds), got "2.5"',
    ],
    [['--yield-ms', '99999999999999999999'], '--yield-ms is too large, got "99999999999999999999"'],
    [['--yield-ms='], '--yield-ms needs a value: a non-negative integer of milliseconds'],
    [['--yield-ms', '--tty'], 'option --yield-ms needs a value'],
  ])('exec %j says what is wrong with the value', async (options, message) => {
    await usageError(['exec', ...options, '--', 'true'], message);
  });

  it.each([
    [['--version'], '"--version" is not a command'],
    [['-x', 'echo', 'hi'], '"-x" is not a command'],
    [['--help'], '"--help" is not a command'],
  ])('exec -- %j is a usage error, not bash reading its own option', async (words, message) => {
    await usageError(['exec', '--', ...words], message);
  });

  it('points a mistaken ux option after -- back to ux', async () => {
    await usageError(
      ['exec', '--', '--version'],
      `ux: "--version" is not a command: the words after -- are the command to run, and a shell would take a word starting with "-" for an option of its own; for ux's version, run: ux --version\n`,
    );
    await usageError(['exec', '--', '-h'], 'for help, run: ux exec --help\n');
    await usageError(['exec', '--', '--tty', 'cat'], "ux exec's own options go before --\n");
  });

  it.each([[['']], [['   ']], [['', '']]])('exec -- %j is an empty command, a usage error', async (words) => {
    await usageError(
      ['exec', '--', ...words],
      'ux: the command is empty; give one after --, e.g. ux exec -- ls -la\n',
    );
  });

  it('still passes words that start with "-" after the command name', async () => {
    const result = await runUx(['exec', '--', 'printf', '%s\\n', '-n', '--version'], makeHome());
    expect(result.stderr).toBe('');
    expect(result.status).toBe(0);
    expect(result.stdout).toContain('Output:\n-n\n--version\n');
  });
});
