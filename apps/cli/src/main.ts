import { ConfigError, UxError } from '@ux/protocol/errors';
import packageJson from '../package.json' with { type: 'json' };
import type { Io } from './io.js';
import { UsageError } from './usage-error.js';

type FeaturesCommand = typeof import('./features-command.js');
type ExecCommand = typeof import('./exec-command.js');
type SandboxCommand = typeof import('./sandbox-command.js');
type DoctorCommand = typeof import('./doctor-command.js');
type McpCommand = typeof import('./mcp-command.js');
type ExecServerCommand = typeof import('./exec-server-command.js');

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
  features list               the feature flags: stage, value, and which layer set it
  features explain            how the flags collapse into a mode and a tool plan

Options:
  -h, --help         this help (also: ux <command> --help)
  --version          print the version

Exit codes: 0 success, 1 error (configuration, runtime), 2 usage error; ux exec and ux sandbox pass
the command's exit code on.
`;

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
      case 'help':
        io.stdout(HELP);
        return 0;
      case '--version':
        io.stdout(`${packageJson.version}\n`);
        return 0;
      // Each command is its own bundle beside this one (tsup.config.ts), loaded only when asked for:
      // start-up time is most of a short command's cost.
      case 'features':
        return (require('./features-command.cjs') as FeaturesCommand).featuresCommand(rest, io);
      case 'exec':
        return await (require('./exec-command.cjs') as ExecCommand).execCommand(rest, io);
      case 'sandbox':
        return await (require('./sandbox-command.cjs') as SandboxCommand).sandboxCommand(rest, io);
      case 'doctor':
        return await (require('./doctor-command.cjs') as DoctorCommand).doctorCommand(rest, io);
      case 'mcp':
        return await (require('./mcp-command.cjs') as McpCommand).mcpCommand(rest, io);
      case 'exec-server':
        return await (require('./exec-server-command.cjs') as ExecServerCommand).execServerCommand(rest, io);
      default:
        throw new UsageError(`unknown command "${command}"`);
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
