import { ConfigError, UxError } from '@ux/protocol';
import packageJson from '../package.json' with { type: 'json' };
import { featuresCommand } from './features-command.js';
import type { Io } from './io.js';
import { UsageError } from './usage-error.js';

export const HELP = `ux ${packageJson.version}: one safe door for running commands

Usage: ux <command> [options]

Commands:
  features list      the feature flags: stage, value, and which layer set it
  features explain   how the flags collapse into a mode and a tool plan

Options:
  -h, --help         this help
  --version          print the version

Exit codes: 0 success, 1 error (configuration, runtime), 2 usage error.
`;

/** Runs one invocation and returns its exit code; never throws. */
export function main(args: string[], io: Io): number {
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
      case 'features':
        return featuresCommand(rest, io);
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`ux: ${error.message}\nRun '${error.helpCommand}' for usage.\n`);
      return 2;
    }
    if (ConfigError.isInstance(error)) {
      io.stderr(`ux: ${error.message}\n`);
      return 1;
    }
    if (UxError.isInstance(error) && error.code === 'invalid_arguments') {
      io.stderr(`ux: ${error.message}\n`);
      return 2;
    }
    io.stderr(
      `ux: unexpected error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}
