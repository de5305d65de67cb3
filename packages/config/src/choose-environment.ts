import { ConfigError, didYouMean, UxError } from '@ux/protocol/core';
import { type EnvironmentConfig, LOCAL_ENVIRONMENT_ID } from './environment-config.js';
import type { SourceLocation } from './toml-document.js';

/** What `chooseEnvironment` needs from a resolved session (`SessionResolution` has it). */
export interface EnvironmentChoices {
  environments: readonly EnvironmentConfig[];
  defaultEnvironment: string;
  allowedEnvironments?: { values: readonly string[]; location: SourceLocation };
}

/**
 * The environment a host starts in: `requested` (`ux exec --env NAME`), else the session's default.
 * An unknown name is a `UxError` (`invalid_arguments`) listing the known ones with close matches; a
 * name the requirements forbid (`local` missing from `allowed_environments`) is a `ConfigError` at the
 * requirements file naming `source` (default `--env NAME`).
 */
export function chooseEnvironment(
  resolved: EnvironmentChoices,
  requested?: string,
  source: string = `--env ${requested}`,
): EnvironmentConfig {
  const name = requested ?? resolved.defaultEnvironment;
  const found = resolved.environments.find((environment) => environment.id === name);
  if (found) return found;
  const allowed = resolved.allowedEnvironments;
  // `local` always exists: missing from the list means the requirements forbid it.
  if (allowed && name === LOCAL_ENVIRONMENT_ID) {
    throw new ConfigError({
      ...allowed.location,
      reason: `environment "${name}" (from ${source}) is not allowed here: allowed_environments = ${formatList(allowed.values)}`,
    });
  }
  const ids = resolved.environments.map((environment) => environment.id);
  throw new UxError(
    'invalid_arguments',
    `unknown environment "${name}"${didYouMean(name, ids)}; environments: ${ids.join(', ') || '(none)'}`,
  );
}

/** `["local", "box"]`, as the requirements file writes it. */
export function formatList(values: readonly string[]): string {
  return `[${values.map((value) => `"${value}"`).join(', ')}]`;
}
