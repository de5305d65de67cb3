import { describe, expect, it } from 'vitest';
import { parseOptions } from './parse-options.js';
import { UsageError } from './usage-error.js';

const EXEC_LIKE = {
  tty: { type: 'boolean' },
  approval: { type: 'string' },
  cwd: { type: 'string' },
  sandbox: { type: 'string' },
  profile: { type: 'string' },
  'writable-root': { type: 'string', multiple: true },
  config: { type: 'string', short: 'c', multiple: true },
  network: { type: 'boolean' },
  'no-network': { type: 'boolean' },
} as const;

function messageOf(args: string[], options: Record<string, unknown> = EXEC_LIKE, help = 'ux exec --help') {
  try {
    parseOptions(args, options as typeof EXEC_LIKE, help, { takesCommand: help === 'ux exec --help' });
  } catch (error) {
    if (UsageError.isInstance(error)) return error.message;
    throw error;
  }
  throw new Error(`no usage error for ${args.join(' ')}`);
}

describe('parseOptions: unknown options', () => {
  it.each([
    [['--aproval', 'never', '--', 'ls'], 'unknown option --aproval (did you mean "--approval"?)'],
    [['--aproval=never', '--', 'ls'], 'unknown option --aproval (did you mean "--approval"?)'],
    [['--sandbx', 'read-only', 'ls'], 'unknown option --sandbx (did you mean "--sandbox"?)'],
    [['--netwrk', '--', 'ls'], 'unknown option --netwrk (did you mean "--network" or "--no-network"?)'],
    [['--tty', '--aprooval', 'never', 'ls'], 'unknown option --aprooval (did you mean "--approval"?)'],
  ])('a misspelt ux option before the command: %j', (args, message) => {
    expect(messageOf(args)).toBe(message);
  });

  it.each([
    [['ls', '-la'], 'unknown option -l; to run a command with options, put it after --: ux exec -- ls -la'],
    [
      ['--tty', 'ls', '-C', '/tmp'],
      'unknown option -C; to run a command with options, put it after --: ux exec --tty -- ls -C /tmp',
    ],
  ])("an option after the command's first word is the command's: %j", (args, message) => {
    expect(messageOf(args)).toBe(message);
  });

  it.each([
    [
      ['-p', 'work', '--', 'ls'],
      "unknown option -p; Codex's -p PROFILE is --profile PROFILE in ux: ux exec --profile work -- ls",
    ],
    [
      ['--enable', 'unified_exec', '--', 'ls'],
      "unknown option --enable; Codex's --enable FEATURE is -c features.FEATURE=true in ux: ux exec -c features.unified_exec=true -- ls",
    ],
    [
      ['--enable=unified_exec', '--', 'ls'],
      "unknown option --enable; Codex's --enable FEATURE is -c features.FEATURE=true in ux: ux exec -c features.unified_exec=true -- ls",
    ],
    [
      ['--disable', 'x', '--', 'ls'],
      "unknown option --disable; Codex's --disable FEATURE is -c features.FEATURE=false in ux: ux exec -c features.x=false -- ls",
    ],
    [
      ['-C', '/srv', '--', 'ls'],
      "unknown option -C; Codex's -C DIR is --cwd DIR in ux: ux exec --cwd /srv -- ls",
    ],
    [
      ['--cd', '/srv', 'ls'],
      "unknown option --cd; Codex's --cd DIR is --cwd DIR in ux: ux exec --cwd /srv ls",
    ],
    [
      ['-s', 'read-only', '--', 'ls'],
      "unknown option -s; Codex's -s MODE is --sandbox MODE in ux: ux exec --sandbox read-only -- ls",
    ],
    [
      ['--add-dir', '/data', '--', 'ls'],
      "unknown option --add-dir; Codex's --add-dir DIR is --writable-root DIR in ux: ux exec --writable-root /data -- ls",
    ],
    [
      ['--full-auto', '--', 'make'],
      "unknown option --full-auto; Codex's --full-auto is --sandbox workspace-write --approval on-request in ux: ux exec --sandbox workspace-write --approval on-request -- make",
    ],
    [['-C'], "unknown option -C (Codex's -C DIR is --cwd DIR in ux)"],
    [
      ['-m', 'gpt', '--', 'ls'],
      "unknown option -m (Codex's -m MODEL: ux runs commands, not a model: there is no model to choose)",
    ],
  ])("Codex's spelling %j gets ux's", (args, message) => {
    expect(messageOf(args)).toBe(message);
  });

  it('says plainly when the command has no equivalent', () => {
    const doctor = { json: { type: 'boolean' }, profile: { type: 'string' } };
    expect(messageOf(['-C', '/srv'], doctor, 'ux doctor --help')).toBe(
      "unknown option -C (Codex's -C DIR is --cwd DIR in ux, which ux doctor does not take: cd to the directory first, then run ux doctor)",
    );
    expect(messageOf(['-a', 'never'], doctor, 'ux doctor --help')).toBe(
      "unknown option -a (Codex's -a POLICY is --approval POLICY in ux, which ux doctor does not take)",
    );
    expect(messageOf(['-p', 'work'], doctor, 'ux doctor --help')).toBe(
      "unknown option -p; Codex's -p PROFILE is --profile PROFILE in ux: ux doctor --profile work",
    );
  });

  it('an unknown option with nothing close is only named', () => {
    expect(messageOf(['--frobnicate', '--', 'ls'])).toBe('unknown option --frobnicate');
  });
});
