import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import {
  applyConfigOverrides,
  type ConfigOverride,
  everyConfigError,
  parseRequirements,
  parseTomlDocument,
  parseUserConfig,
  type Requirements,
  type TomlDocument,
  type UserConfig,
} from '@ux/config';
import { ConfigError } from '@ux/protocol/core';

export interface ConfigPaths {
  /** `$UX_HOME`, default `~/.ux`. */
  home: string;
  /** `$UX_HOME/config.toml`; `UX_HOME` defaults to `~/.ux`. */
  userConfig: string;
  /** `$UX_REQUIREMENTS`, default `/etc/ux/requirements.toml`. */
  requirements: string;
}

export function configPaths(env: NodeJS.ProcessEnv): ConfigPaths {
  const home = env.UX_HOME ? resolve(env.UX_HOME) : join(homedir(), '.ux');
  return {
    home,
    userConfig: join(home, 'config.toml'),
    requirements: env.UX_REQUIREMENTS ? resolve(env.UX_REQUIREMENTS) : '/etc/ux/requirements.toml',
  };
}

export interface LoadedConfiguration {
  paths: ConfigPaths;
  user?: UserConfig;
  requirements?: Requirements;
}

/**
 * Reads and validates both files, with `-c` overrides written over the user config; a missing file is
 * simply absent, anything else wrong is a `ConfigError`.
 */
export function loadConfiguration(
  env: NodeJS.ProcessEnv,
  overrides: readonly ConfigOverride[] = [],
): LoadedConfiguration {
  const paths = configPaths(env);
  const file = readTomlFile(paths.userConfig);
  const userDocument = overrides.length > 0 ? applyConfigOverrides(file, overrides, paths.userConfig) : file;
  const requirementsDocument = readTomlFile(paths.requirements);
  return {
    paths,
    user: userDocument && parseUserConfig(userDocument),
    requirements: requirementsDocument && parseRequirements(requirementsDocument),
  };
}

/**
 * Every mistake in config.toml (with the `-c` overrides) and in the requirements, each a `ConfigError`
 * at file:line:column, not only the first as `loadConfiguration` throws it: for `ux doctor`. A file that
 * is not valid TOML is one mistake (the parser cannot go on past it). Empty when both parse.
 */
export function everyConfigurationError(
  env: NodeJS.ProcessEnv,
  overrides: readonly ConfigOverride[] = [],
): ConfigError[] {
  const paths = configPaths(env);
  const errors: ConfigError[] = [];
  const parseFile = (path: string): TomlDocument | undefined => {
    try {
      return readTomlFile(path);
    } catch (error) {
      if (!ConfigError.isInstance(error)) throw error;
      errors.push(error);
      return undefined;
    }
  };
  const file = parseFile(paths.userConfig);
  if (errors.length === 0 || overrides.length > 0) {
    try {
      const document = overrides.length > 0 ? applyConfigOverrides(file, overrides, paths.userConfig) : file;
      if (document) errors.push(...everyConfigError(document, parseUserConfig));
    } catch (error) {
      if (!ConfigError.isInstance(error)) throw error;
      errors.push(error);
    }
  }
  const requirements = parseFile(paths.requirements);
  if (requirements) errors.push(...everyConfigError(requirements, parseRequirements));
  return errors;
}

function readTomlFile(path: string): TomlDocument | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new ConfigError(
      {
        file: path,
        reason:
          code === 'EISDIR' ? 'is a directory, not a file' : `cannot be read (${code ?? String(error)})`,
      },
      { cause: error },
    );
  }
  return parseTomlDocument(text, path);
}
