import { statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { didYouMean } from '@ux/protocol/core';
import { ConfigError, UxError } from '@ux/protocol/errors';
import packageJson from '../package.json' with { type: 'json' };
import { loadCommandBundle } from './command-bundle.js';
import { displayCommand } from './display-command.js';
import type { Io } from './io.js';
import { UsageError } from './usage-error.js';

type FeaturesCommand = typeof import('./features-command.js');
type ExecCommand = typeof import('./exec-command.js');
type SandboxCommand = typeof import('./sandbox-command.js');
type DoctorCommand = typeof import('./doctor-command.js');
type McpCommand = typeof import('./mcp-command.js');
type ExecServerCommand = typeof import('./exec-server-command.js');
type ZshForkCommand = typeof import('./zsh-fork-command.js');
type ApplyPatchCommand = typeof import('./apply-patch-command.js');
type ControlCommand = typeof import('./control-command.js');
type ApprovalsCommand = typeof import('./approvals-command.js');

export const HELP = `ux ${packageJson.version}: one safe door for running commands

Usage: ux <command> [options]

Commands:
  exec [options] -- CMD…      run CMD through the door as a model would, print the receipt; attach
                              when it keeps running
  sandbox [options] -- CMD…   run CMD directly under this platform's sandbox
  doctor                      check what ux needs here and how the sandbox is configured
  mcp                         serve exec_command and write_stdin to an MCP client over stdio
  exec-server --listen stdio|ws://IP:PORT
                              serve Codex's exec-server protocol: a process host for remote
                              environments (ssh host ux exec-server --listen stdio)
  ps [--json]                 every live ux process (mcp, exec, exec-server) and its sessions: state,
                              idle time, last output lines
  attach PID:SESSION          watch a session of any ux process and type into it (Ctrl-] detaches)
  kill PID:SESSION            end one session of a ux process
  features list               the feature flags: stage, value, and which layer set it
  features explain            how the flags collapse into a mode and a tool plan
  zsh-fork build|status       build the patched zsh that ZshFork mode runs, or check it
  apply-patch [PATCH]         apply a patch in apply_patch's format here (sandboxed commands run it
                              as apply_patch)
  approvals [--watch] [--json]
                              the approval questions your ux processes wait on, answered with one key
  approvals answer ID DECISION
                              answer one from a script (approve, approve-session, deny, abort)
  help [COMMAND]              this help, or COMMAND's own (same as ux COMMAND --help)

Options:
  -h, --help         this help (also: ux <command> --help)
  --version          print the version

Exit codes: 0 success, 1 error (configuration, runtime), 2 usage error; ux exec and ux sandbox pass
the command's exit code on.
`;

type Run = (args: string[], io: Io) => number | Promise<number>;

// Each command is its own bundle beside this one (tsup.config.ts), loaded only when asked for, with
// the code cache the build wrote beside it (command-bundle.ts): start-up time is most of a short
// command's cost.
const bundle = <T>(name: string) => loadCommandBundle(join(__dirname, `${name}.cjs`)) as T;
const COMMANDS: Record<string, Run> = {
  exec: (args, io) => bundle<ExecCommand>('exec-command').execCommand(args, io),
  sandbox: (args, io) => bundle<SandboxCommand>('sandbox-command').sandboxCommand(args, io),
  doctor: (args, io) => bundle<DoctorCommand>('doctor-command').doctorCommand(args, io),
  mcp: (args, io) => bundle<McpCommand>('mcp-command').mcpCommand(args, io),
  'exec-server': (args, io) => bundle<ExecServerCommand>('exec-server-command').execServerCommand(args, io),
  features: (args, io) => bundle<FeaturesCommand>('features-command').featuresCommand(args, io),
  'zsh-fork': (args, io) => bundle<ZshForkCommand>('zsh-fork-command').zshForkCommand(args, io),
  ps: (args, io) => bundle<ControlCommand>('control-command').controlCommand('ps', args, io),
  attach: (args, io) => bundle<ControlCommand>('control-command').controlCommand('attach', args, io),
  kill: (args, io) => bundle<ControlCommand>('control-command').controlCommand('kill', args, io),
  'apply-patch': (args, io) => bundle<ApplyPatchCommand>('apply-patch-command').applyPatchCommand(args, io),
  approvals: (args, io) => bundle<ApprovalsCommand>('approvals-command').approvalsCommand(args, io),
};
const OPTIONS = ['--help', '--version'];

/** Runs one invocation and returns its exit code; never throws. */
export async function main(args: string[], io: Io): Promise<number> {
  try {
    const [command, ...rest] = args;
    switch (command) {
      case undefined:
        io.stderr(HELP);
        return 2;
      case '-h':
      case '--help':
        io.stdout(HELP);
        return 0;
      case 'help':
        return await help(rest, io);
      case '--version':
        io.stdout(`${packageJson.version}\n`);
        return 0;
      default:
        return await (commandNamed(command) ?? unknownCommand(command, rest))(rest, io);
    }
  } catch (error) {
    if (UsageError.isInstance(error)) {
      io.stderr(`ux: ${error.message}\nRun '${error.helpCommand}' for usage.\n`);
      return 2;
    }
    if (ConfigError.isInstance(error)) {
      io.stderr(`ux: ${error.message}\n`);
      return 1;
    }
    if (UxError.isInstance(error)) {
      io.stderr(`ux: ${error.message}\n`);
      return error.code === 'invalid_arguments' ? 2 : 1;
    }
    io.stderr(
      `ux: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}

/** `ux help [COMMAND]`: the command's own help, which only its bundle holds. */
async function help(args: string[], io: Io): Promise<number> {
  const [command, extra] = args;
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"; usage: ux help [COMMAND]`);
  if (command === undefined || command === 'help') {
    io.stdout(HELP);
    return 0;
  }
  const run = commandNamed(command);
  if (!run)
    throw new UsageError(
      `no help for "${command}": not a ux command${didYouMean(command, Object.keys(COMMANDS))}; the commands are ${Object.keys(COMMANDS).join(', ')}`,
    );
  return await run(['--help'], io);
}

/** Own keys only: `ux toString` is not a command. */
function commandNamed(name: string): Run | undefined {
  return Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
}

function unknownCommand(name: string, args: readonly string[]): never {
  if (name.startsWith('-')) throw new UsageError(`unknown option ${name}${didYouMean(name, OPTIONS)}`);
  const hint = didYouMean(name, [...Object.keys(COMMANDS), 'help']);
  // Nothing close, or a program of that name (`ux ls` is near `ux ps`): perhaps a program to run,
  // which goes after `ux exec --`.
  const run = `; to run it as a command: ux exec -- ${displayCommand([name, ...args])}`;
  throw new UsageError(`unknown command "${name}"${hint ? `${hint}${onPath(name) ? run : ''}` : run}`);
}

/** Whether `name` is a program on PATH (only asked when a command was not found). */
function onPath(name: string): boolean {
  if (!/^[\w.+-]+$/.test(name)) return false;
  return (process.env.PATH ?? '').split(delimiter).some((dir) => {
    try {
      return dir !== '' && statSync(join(dir, name)).isFile();
    } catch {
      return false;
    }
  });
}
