import { didYouMean, formatLocation, isAbsolutePath } from '@ux/protocol/core';
import { parseEnvironments, type RemoteEnvironmentConfig } from './environment-config.js';
import { describe, type FeatureTable, isTable, parseFeatureTable } from './feature-table.js';
import { rejectUnknownKeys } from './reject-unknown-keys.js';
import { parseReviewConfig, REVIEW_KEYS, type ReviewConfig } from './review-settings.js';
import {
  parseSandboxPluginList,
  parseSandboxTables,
  type SandboxSettingsTable,
} from './sandbox-plugin-config.js';
import {
  type Located,
  PROFILE_SESSION_KEYS,
  parseSessionSettings,
  SESSION_KEYS,
  type SessionSettings,
} from './session-settings.js';
import type { SourceLocation, TomlDocument } from './toml-document.js';

/** The parts of `$UX_HOME/config.toml` this package owns. */
export interface UserConfig {
  file: string;
  features: FeatureTable;
  /** The default profile, with where it was chosen. */
  profile?: { name: string; location: SourceLocation };
  profiles: Record<string, { features: FeatureTable; session: SessionSettings; location: SourceLocation }>;
  /** Approval policy, sandbox mode and the other keys of a session. */
  session: SessionSettings;
  allowLoginShell?: boolean;
  /**
   * `early_exit_window_ms`: how long after a sandboxed command starts a failure still counts as a
   * sandbox denial (default 150; 0–60000). Raise it on machines so loaded that a denied command takes
   * longer than that to fail.
   */
  earlyExitWindowMs?: number;
  zshFork?: { zshPath?: string; execveWrapperPath?: string };
  /**
   * `sandbox_plugins`: packages or paths to load as sandbox backends, besides the shipped ones, in the
   * order written (paths relative to this file).
   */
  sandboxPlugins?: { values: Located<string>[]; location: SourceLocation };
  /**
   * `[sandbox.<id>]`: each backend's settings, checked by its plugin's own schema when it loads. The
   * deprecated `bwrap_path` arrives here as `[sandbox.bwrap] path` (with a warning).
   */
  sandbox: Record<string, SandboxSettingsTable>;
  /** `[environments.<name>]`: remote environments, sorted by name (checked against requirements on resolution). */
  environments: RemoteEnvironmentConfig[];
  /** `[[hooks.permission_request]]`, `[auto_review]` and `approvals_reviewer`. */
  review: ReviewConfig;
  warnings: string[];
}

const TOP_LEVEL_KEYS = [
  'profile',
  'allow_login_shell',
  'early_exit_window_ms',
  'features',
  'profiles',
  'zsh_fork',
  'bwrap_path',
  'sandbox_plugins',
  'sandbox',
  'environments',
  ...REVIEW_KEYS,
  ...SESSION_KEYS,
];
const PROFILE_KEYS = ['features', ...PROFILE_SESSION_KEYS];
const ZSH_FORK_KEYS = ['zsh_path', 'execve_wrapper_path'];

/** Validates a user config document. Every mistake is a `ConfigError` at file:line:column. */
export function parseUserConfig(document: TomlDocument): UserConfig {
  const root = document.value;
  rejectUnknownKeys(document, [], root, TOP_LEVEL_KEYS);
  const features = parseFeatureTable(document, ['features'], 'user');
  const warnings = [...features.warnings];

  const profiles: UserConfig['profiles'] = {};
  if (root.profiles !== undefined) {
    if (!isTable(root.profiles))
      throw document.error(['profiles'], `profiles must be a table of [profiles.<name>] tables`);
    for (const [name, body] of Object.entries(root.profiles)) {
      if (!isTable(body)) throw document.error(['profiles', name], `profiles.${name} must be a table`);
      rejectUnknownKeys(document, ['profiles', name], body, PROFILE_KEYS);
      const table = parseFeatureTable(document, ['profiles', name, 'features'], 'profile', name);
      warnings.push(...table.warnings);
      profiles[name] = {
        features: table,
        session: parseSessionSettings(document, ['profiles', name], PROFILE_SESSION_KEYS),
        location: document.locate(['profiles', name]),
      };
    }
  }

  let profile: UserConfig['profile'];
  if (root.profile !== undefined) {
    if (typeof root.profile !== 'string')
      throw document.error(['profile'], `profile must be a string, got ${describe(root.profile)}`);
    if (!(root.profile in profiles)) {
      const names = Object.keys(profiles);
      throw document.error(
        ['profile'],
        `profile "${root.profile}" is not defined${didYouMean(root.profile, names)}; defined profiles: ${names.join(', ') || '(none)'}`,
      );
    }
    profile = { name: root.profile, location: document.locate(['profile']) };
  }

  let allowLoginShell: boolean | undefined;
  if (root.allow_login_shell !== undefined) {
    if (typeof root.allow_login_shell !== 'boolean') {
      throw document.error(
        ['allow_login_shell'],
        `allow_login_shell must be true or false, got ${describe(root.allow_login_shell)}`,
      );
    }
    allowLoginShell = root.allow_login_shell;
  }

  let earlyExitWindowMs: number | undefined;
  if (root.early_exit_window_ms !== undefined) {
    const value = root.early_exit_window_ms;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 60_000) {
      throw document.error(
        ['early_exit_window_ms'],
        `early_exit_window_ms must be a whole number of milliseconds from 0 to 60000, got ${describe(value)}`,
      );
    }
    earlyExitWindowMs = value;
  }

  let zshFork: UserConfig['zshFork'];
  if (root.zsh_fork !== undefined) {
    if (!isTable(root.zsh_fork)) throw document.error(['zsh_fork'], 'zsh_fork must be a table');
    rejectUnknownKeys(document, ['zsh_fork'], root.zsh_fork, ZSH_FORK_KEYS);
    zshFork = {};
    for (const [key, field] of [
      ['zsh_path', 'zshPath'],
      ['execve_wrapper_path', 'execveWrapperPath'],
    ] as const) {
      const value = root.zsh_fork[key];
      if (value === undefined) continue;
      if (typeof value !== 'string' || !isAbsolutePath(value)) {
        throw document.error(
          ['zsh_fork', key],
          `zsh_fork.${key} must be an absolute path, got ${describe(value)}`,
        );
      }
      zshFork[field] = value;
    }
  }

  const sandboxPlugins = parseSandboxPluginList(document, 'sandbox_plugins', { allowEmpty: true });
  const sandbox = parseSandboxTables(document, 'sandbox');
  // `bwrap_path` (before backends had settings tables) is `[sandbox.bwrap] path`, with a warning.
  if (root.bwrap_path !== undefined) {
    if (typeof root.bwrap_path !== 'string' || !isAbsolutePath(root.bwrap_path))
      throw document.error(
        ['bwrap_path'],
        `bwrap_path must be the absolute path of the bwrap binary, got ${describe(root.bwrap_path)}`,
      );
    const location = document.locate(['bwrap_path']);
    const table = sandbox.bwrap;
    if (table?.value.path !== undefined)
      throw document.error(
        ['bwrap_path'],
        `bwrap_path and [sandbox.bwrap] path (${formatLocation(table.locate(['path']))}) both name bwrap; keep only [sandbox.bwrap] path`,
      );
    warnings.push(
      `${formatLocation(location)}: bwrap_path is deprecated; write it as [sandbox.bwrap] path = ${JSON.stringify(root.bwrap_path)}`,
    );
    sandbox.bwrap = {
      value: { ...table?.value, path: root.bwrap_path },
      location: table?.location ?? location,
      locate: (path) => (path[0] === 'path' ? location : (table?.locate(path) ?? location)),
    };
  }

  const environments = parseEnvironments(document, ['environments']);
  const session = parseSessionSettings(document, []);
  const review = parseReviewConfig(document);
  return {
    file: document.file,
    features,
    profile,
    profiles,
    allowLoginShell,
    ...(earlyExitWindowMs === undefined ? {} : { earlyExitWindowMs }),
    zshFork,
    ...(sandboxPlugins ? { sandboxPlugins } : {}),
    sandbox,
    environments,
    review,
    session,
    warnings,
  };
}
