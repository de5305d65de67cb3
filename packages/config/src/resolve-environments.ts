import { ConfigError, didYouMean, formatLocation } from '@ux/protocol/core';
import { chooseEnvironment, formatList } from './choose-environment.js';
import { type EnvironmentConfig, LOCAL_ENVIRONMENT_ID } from './environment-config.js';
import type { Requirements } from './requirements.js';
import type { Located } from './session-settings.js';
import type { SourceLocation } from './toml-document.js';
import type { UserConfig } from './user-config.js';

export interface ResolveEnvironmentsInput {
  user?: UserConfig;
  requirements?: Requirements;
  /** The profile in effect. */
  profile?: string;
  /** `--env NAME`: the environment to start in, over `default_environment`. */
  cli?: { value: string; flag: string };
}

export interface EnvironmentResolution {
  /** `local` first when allowed, then the requirements' environments, then the user's, each by name. */
  environments: EnvironmentConfig[];
  /** The environment commands run in unless a call names another. */
  defaultEnvironment: string;
  /** The requirements' `allowed_environments`, when set. */
  allowedEnvironments?: { values: string[]; location: SourceLocation };
}

/**
 * The session's environments and its default: the requirements' environments and the user's (which
 * may not redefine them, and must be allowed), and `default_environment` from the command line, the
 * profile or the top level, else `local`, else the only allowed remote environment. Every mistake is a
 * `ConfigError` at the file:line:column that made it.
 */
export function resolveEnvironments(input: ResolveEnvironmentsInput): EnvironmentResolution {
  const { user, requirements } = input;
  const allowed = requirements?.allowedEnvironments;
  const isAllowed = (id: string) => !allowed || allowed.values.includes(id);
  const allowedText =
    allowed && `allowed_environments = ${formatList(allowed.values)} (${formatLocation(allowed.location)})`;
  const managed = requirements?.environments ?? [];

  for (const environment of user?.environments ?? []) {
    const label = `environments.${environment.id}`;
    const owner = managed.find((candidate) => candidate.id === environment.id);
    if (owner)
      throw new ConfigError({
        ...environment.definedAt,
        reason: `${label} is defined by requirements ${formatLocation(owner.definedAt)}; it cannot be redefined`,
      });
    if (!isAllowed(environment.id))
      throw new ConfigError({
        ...environment.definedAt,
        reason: `${label} is not allowed here: ${allowedText}`,
      });
  }

  const environments: EnvironmentConfig[] = [
    ...(isAllowed(LOCAL_ENVIRONMENT_ID) ? [{ id: LOCAL_ENVIRONMENT_ID, kind: 'local' } as const] : []),
    ...managed,
    ...(user?.environments ?? []),
  ];
  const known = [
    LOCAL_ENVIRONMENT_ID,
    ...managed.map((e) => e.id),
    ...(user?.environments ?? []).map((e) => e.id),
  ];

  // A name that is not defined is a mistake wherever it is written, in the profile in effect or not.
  const written: { key: string; setting: Located<string> }[] = [];
  for (const [name, profile] of Object.entries(user?.profiles ?? {})) {
    const setting = profile.session.defaultEnvironment;
    if (setting) written.push({ key: `profiles.${name}.default_environment`, setting });
  }
  if (user?.session.defaultEnvironment)
    written.push({ key: 'default_environment', setting: user.session.defaultEnvironment });
  for (const { key, setting } of written) {
    if (known.includes(setting.value)) continue;
    throw new ConfigError({
      ...setting.location,
      reason: `${key} "${setting.value}" is not defined${didYouMean(setting.value, known)}; environments: ${known.join(', ')}`,
    });
  }

  const resolution = (defaultEnvironment: string): EnvironmentResolution => ({
    environments,
    defaultEnvironment,
    ...(allowed ? { allowedEnvironments: allowed } : {}),
  });

  if (input.cli) {
    chooseEnvironment(resolution(LOCAL_ENVIRONMENT_ID), input.cli.value, input.cli.flag);
    return resolution(input.cli.value);
  }
  const chosen =
    written.find(({ key }) => key === `profiles.${input.profile}.default_environment`) ??
    written.find(({ key }) => key === 'default_environment');
  if (chosen) {
    if (!isAllowed(chosen.setting.value))
      throw new ConfigError({
        ...chosen.setting.location,
        reason: `${chosen.key} "${chosen.setting.value}" is not allowed here: ${allowedText}`,
      });
    return resolution(chosen.setting.value);
  }
  if (isAllowed(LOCAL_ENVIRONMENT_ID)) return resolution(LOCAL_ENVIRONMENT_ID);

  // Local commands are forbidden and nobody chose: only an unambiguous choice is made for the user.
  const remote = environments.filter((environment) => environment.kind !== 'local');
  if (remote.length === 1) return resolution(remote[0]!.id);
  const where = user ? user.file : '$UX_HOME/config.toml';
  throw new ConfigError({
    ...allowed!.location,
    reason:
      remote.length === 0
        ? `allowed_environments = ${formatList(allowed!.values)} forbids local commands and none of these environments is defined: define one under [environments.<name>] in ${where}`
        : `allowed_environments = ${formatList(allowed!.values)} forbids local commands and allows ${remote.length} environments (${remote
            .map((environment) => environment.id)
            .join(', ')}): set default_environment in ${where} to one of them, or choose one with --env`,
  });
}
