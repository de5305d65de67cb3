import { type ConfigOverride, isConfigOverrideLabel, parseConfigOverride } from '@ux/config';
import { ConfigError } from '@ux/protocol/core';
import { UsageError } from './usage-error.js';

/** `-c KEY=VALUE` arguments, in order; a malformed one is a usage error naming it. */
export function parseConfigArguments(
  given: readonly string[] | undefined,
  helpCommand: string,
): ConfigOverride[] {
  return (given ?? []).map((argument) => {
    try {
      return parseConfigOverride(argument);
    } catch (error) {
      throw asUsageError(error, helpCommand);
    }
  });
}

/** A config error located at a `-c` argument is the command line's mistake: a usage error. */
export function asUsageError(error: unknown, helpCommand: string): unknown {
  if (ConfigError.isInstance(error) && isConfigOverrideLabel(error.file))
    return new UsageError(error.message, helpCommand);
  return error;
}
