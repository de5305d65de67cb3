import {
  type ApprovalPolicy,
  didYouMean,
  formatLocation,
  granularApprovalConfig,
  granularPromptKinds,
  isAbsolutePath,
  type SandboxMode,
  type ShellEnvironmentPolicy,
  sandboxModes,
  simpleApprovalPolicies,
} from '@ux/protocol/core';
import { parseDenyReadEntries } from './deny-read-entries.js';
import { ENVIRONMENT_NAME, ENVIRONMENT_NAME_RULE } from './environment-config.js';
import { describe, isTable } from './feature-table.js';
import { type NetworkSetting, parseNetworkSetting, parseUnixSocketEntries } from './network-setting.js';
import { isConfigOverrideLabel } from './parse-config-override.js';
import { rejectUnknownKeys } from './reject-unknown-keys.js';
import { strings } from './strings.js';
import { formatKeyPath, type SourceLocation, type TomlDocument } from './toml-document.js';

/** A value from a config file, with where it was written. */
export interface Located<T> {
  value: T;
  location: SourceLocation;
}

/** The network and unix socket settings a sandbox mode's table may hold. */
export interface SandboxNetworkSettings {
  /**
   * `network = "off" | "on" | { allow, deny, ask_unknown }` (in `[sandbox_workspace_write]` also the
   * legacy `network_access = true | false`); absent when neither was written.
   */
  network?: Located<NetworkSetting>;
  /** `allow_unix_sockets`, as written (`~/…` is expanded when the session is resolved). */
  allowUnixSockets?: Located<string[]>;
}

/** `[sandbox_workspace_write]`: what workspace-write mode adds to the working directory. */
export interface WorkspaceWriteSettings extends SandboxNetworkSettings {
  writableRoots: string[];
  /** `network = "on"` (or `network_access = true`): the host's network, unproxied. */
  networkAccess: boolean;
  excludeTmpdirEnvVar: boolean;
  excludeSlashTmp: boolean;
  /**
   * `private_tmp` (default true): commands get a `/tmp` and `$TMPDIR` of the session's own instead of
   * the host's, which nothing outside the sandbox reads (docs/threat-model.md). False gives them the
   * host's, writable, as Codex does.
   */
  privateTmp: boolean;
}

/** `[sandbox_read_only]`: read-only mode's network and unix sockets (it has nothing else to set). */
export type ReadOnlySettings = SandboxNetworkSettings;

/** `[shell_environment_policy]`: which host variables commands start from (Codex's key names). The one
 * policy type and its semantics live in `@ux/protocol/core`. */
export type { ShellEnvironmentPolicy };

/** The session keys of a config file or one of its profiles; absent keys were not written. */
export interface SessionSettings {
  approvalPolicy?: Located<ApprovalPolicy>;
  sandboxMode?: Located<SandboxMode>;
  workspaceWrite?: Located<WorkspaceWriteSettings>;
  readOnly?: Located<ReadOnlySettings>;
  shellEnvironmentPolicy?: Located<ShellEnvironmentPolicy>;
  /** Exec-policy rule files, absolute. */
  rules?: Located<string[]>;
  /** Enabled sandbox backends, in order of preference. */
  sandboxBackends?: Located<string[]>;
  /** Paths and globs sandboxed commands may not read, as written (`~/.ssh`, `**\/*.pem`). */
  denyRead?: Located<string[]>;
  /** `default_environment`: the environment commands run in unless one is named (checked on resolution). */
  defaultEnvironment?: Located<string>;
}

export const SESSION_KEYS = [
  'approval_policy',
  'sandbox_mode',
  'sandbox_workspace_write',
  'sandbox_read_only',
  'shell_environment_policy',
  'rules',
  'sandbox_backends',
  'deny_read',
  'default_environment',
] as const;
/** The session keys a profile may override. */
export const PROFILE_SESSION_KEYS = ['approval_policy', 'sandbox_mode', 'default_environment'] as const;

const WORKSPACE_WRITE_KEYS = [
  'writable_roots',
  'network',
  'network_access',
  'allow_unix_sockets',
  'exclude_tmpdir_env_var',
  'exclude_slash_tmp',
  'private_tmp',
];
const READ_ONLY_KEYS = ['network', 'allow_unix_sockets'];
const ENVIRONMENT_KEYS = ['inherit', 'ignore_default_excludes', 'exclude', 'include_only', 'set'];
const GRANULAR_KEYS: readonly string[] = granularPromptKinds;
const BACKEND_ID = /^[a-z][a-z0-9-]*$/;

/**
 * Reads the session keys of the table at `base` (`[]` for the top level, `['profiles', name]` for a
 * profile). Every mistake is a `ConfigError` at file:line:column.
 */
export function parseSessionSettings(
  document: TomlDocument,
  base: readonly string[],
  keys: readonly string[] = SESSION_KEYS,
): SessionSettings {
  let table: unknown = document.value;
  for (const key of base) table = (table as Record<string, unknown> | undefined)?.[key];
  if (!isTable(table)) return {};
  const at = (key: string) => [...base, key];
  const name = (key: string) => formatKeyPath(at(key));
  const settings: SessionSettings = {};

  if (keys.includes('approval_policy') && table.approval_policy !== undefined) {
    settings.approvalPolicy = {
      value: parseApprovalPolicy(document, at('approval_policy'), table.approval_policy),
      location: document.locate(at('approval_policy')),
    };
  }

  if (keys.includes('sandbox_mode') && table.sandbox_mode !== undefined) {
    const mode = table.sandbox_mode;
    if (typeof mode !== 'string' || !(sandboxModes as readonly string[]).includes(mode)) {
      throw document.error(
        at('sandbox_mode'),
        `${name('sandbox_mode')} must be one of ${sandboxModes.join(', ')}, got ${describe(mode)}${
          typeof mode === 'string' ? didYouMean(mode, sandboxModes) : ''
        }`,
      );
    }
    settings.sandboxMode = { value: mode as SandboxMode, location: document.locate(at('sandbox_mode')) };
  }

  if (keys.includes('sandbox_workspace_write') && table.sandbox_workspace_write !== undefined) {
    const path = at('sandbox_workspace_write');
    const section = table.sandbox_workspace_write;
    if (!isTable(section)) throw document.error(path, `${name('sandbox_workspace_write')} must be a table`);
    rejectUnknownKeys(document, path, section, WORKSPACE_WRITE_KEYS);
    const network = sandboxNetwork(document, path, section);
    settings.workspaceWrite = {
      value: {
        writableRoots: absolutePaths(document, [...path, 'writable_roots'], section.writable_roots),
        networkAccess: network.network?.value.mode === 'on',
        ...network,
        excludeTmpdirEnvVar: boolean(
          document,
          [...path, 'exclude_tmpdir_env_var'],
          section.exclude_tmpdir_env_var,
        ),
        excludeSlashTmp: boolean(document, [...path, 'exclude_slash_tmp'], section.exclude_slash_tmp),
        privateTmp:
          section.private_tmp === undefined
            ? true
            : boolean(document, [...path, 'private_tmp'], section.private_tmp),
      },
      location: document.locate(path),
    };
  }

  if (keys.includes('sandbox_read_only') && table.sandbox_read_only !== undefined) {
    const path = at('sandbox_read_only');
    const section = table.sandbox_read_only;
    if (!isTable(section)) throw document.error(path, `${name('sandbox_read_only')} must be a table`);
    rejectUnknownKeys(document, path, section, READ_ONLY_KEYS);
    settings.readOnly = { value: sandboxNetwork(document, path, section), location: document.locate(path) };
  }

  if (keys.includes('shell_environment_policy') && table.shell_environment_policy !== undefined) {
    const path = at('shell_environment_policy');
    const section = table.shell_environment_policy;
    if (!isTable(section)) throw document.error(path, `${name('shell_environment_policy')} must be a table`);
    rejectUnknownKeys(document, path, section, ENVIRONMENT_KEYS);
    const policy: ShellEnvironmentPolicy = {};
    if (section.inherit !== undefined) {
      const inherit = section.inherit;
      if (inherit !== 'all' && inherit !== 'core' && inherit !== 'none') {
        throw document.error(
          [...path, 'inherit'],
          `${formatKeyPath([...path, 'inherit'])} must be "all", "core" or "none", got ${describe(inherit)}`,
        );
      }
      policy.inherit = inherit;
    }
    if (section.ignore_default_excludes !== undefined)
      policy.ignoreDefaultExcludes = boolean(
        document,
        [...path, 'ignore_default_excludes'],
        section.ignore_default_excludes,
      );
    if (section.exclude !== undefined)
      policy.exclude = strings(document, [...path, 'exclude'], section.exclude);
    if (section.include_only !== undefined)
      policy.includeOnly = strings(document, [...path, 'include_only'], section.include_only);
    if (section.set !== undefined) {
      const setPath = [...path, 'set'];
      if (!isTable(section.set))
        throw document.error(setPath, `${formatKeyPath(setPath)} must be a table of strings`);
      const set: Record<string, string> = {};
      for (const [variable, value] of Object.entries(section.set)) {
        if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(variable))
          throw document.error(
            [...setPath, variable],
            `"${variable}" is not a valid environment variable name`,
          );
        if (typeof value !== 'string')
          throw document.error(
            [...setPath, variable],
            `${formatKeyPath([...setPath, variable])} must be a string, got ${describe(value)}`,
          );
        set[variable] = value;
      }
      policy.set = set;
    }
    settings.shellEnvironmentPolicy = { value: policy, location: document.locate(path) };
  }

  if (keys.includes('rules') && table.rules !== undefined) {
    settings.rules = {
      value: absolutePaths(document, at('rules'), table.rules),
      location: document.locate(at('rules')),
    };
  }

  if (keys.includes('sandbox_backends') && table.sandbox_backends !== undefined) {
    const ids = strings(document, at('sandbox_backends'), table.sandbox_backends);
    if (ids.length === 0)
      throw document.error(
        at('sandbox_backends'),
        `${name('sandbox_backends')} must name at least one backend (to run without a sandbox, set sandbox_mode = "danger-full-access")`,
      );
    ids.forEach((id, index) => {
      if (!BACKEND_ID.test(id))
        throw document.error(
          [...at('sandbox_backends'), index],
          `"${id}" is not a backend id (lowercase letters, digits, dashes)`,
        );
    });
    settings.sandboxBackends = { value: ids, location: document.locate(at('sandbox_backends')) };
  }

  if (keys.includes('deny_read') && table.deny_read !== undefined) {
    settings.denyRead = {
      value: parseDenyReadEntries(document, at('deny_read'), table.deny_read),
      location: document.locate(at('deny_read')),
    };
  }

  if (keys.includes('default_environment') && table.default_environment !== undefined) {
    const value = table.default_environment;
    if (typeof value !== 'string' || !ENVIRONMENT_NAME.test(value))
      throw document.error(
        at('default_environment'),
        `${name('default_environment')} must be an environment name (${ENVIRONMENT_NAME_RULE}), got ${describe(value)}`,
      );
    settings.defaultEnvironment = { value, location: document.locate(at('default_environment')) };
  }
  return settings;
}

/**
 * `network` (and, in `[sandbox_workspace_write]`, its legacy spelling `network_access`) and
 * `allow_unix_sockets` of a sandbox mode's table. Both spellings in one file are a mistake; a `-c`
 * override of one of them replaces the other written in the file, as an override should.
 */
function sandboxNetwork(
  document: TomlDocument,
  path: readonly string[],
  section: Record<string, unknown>,
): SandboxNetworkSettings {
  const settings: SandboxNetworkSettings = {};
  const networkPath = [...path, 'network'];
  const legacyPath = [...path, 'network_access'];
  let useNetwork = section.network !== undefined;
  let useLegacy = section.network_access !== undefined;
  if (useNetwork && useLegacy) {
    const fromOverride = (at: readonly string[]) => isConfigOverrideLabel(document.locate(at).file);
    const [network, legacy] = [fromOverride(networkPath), fromOverride(legacyPath)];
    if (network === legacy)
      throw document.error(
        networkPath,
        `${formatKeyPath(networkPath)} and ${formatKeyPath(legacyPath)} (its legacy spelling, at ${formatLocation(document.locate(legacyPath))}) are both set; keep network`,
      );
    useNetwork = network;
    useLegacy = legacy;
  }
  if (useNetwork)
    settings.network = {
      value: parseNetworkSetting(document, networkPath, section.network),
      location: document.locate(networkPath),
    };
  else if (useLegacy)
    settings.network = {
      value: { mode: boolean(document, legacyPath, section.network_access) ? 'on' : 'off' },
      location: document.locate(legacyPath),
    };
  if (section.allow_unix_sockets !== undefined)
    settings.allowUnixSockets = {
      value: parseUnixSocketEntries(document, [...path, 'allow_unix_sockets'], section.allow_unix_sockets),
      location: document.locate([...path, 'allow_unix_sockets']),
    };
  return settings;
}

function parseApprovalPolicy(document: TomlDocument, path: string[], value: unknown): ApprovalPolicy {
  if (typeof value === 'string') {
    if ((simpleApprovalPolicies as readonly string[]).includes(value)) return value as ApprovalPolicy;
    throw document.error(
      path,
      `${formatKeyPath(path)}: unknown approval policy "${value}"${didYouMean(value, simpleApprovalPolicies)}; expected one of ${simpleApprovalPolicies.join(', ')}, or a [${formatKeyPath(path)}.granular] table`,
    );
  }
  if (isTable(value) && Object.keys(value).length === 1 && isTable(value.granular)) {
    const granular = value.granular;
    rejectUnknownKeys(document, [...path, 'granular'], granular, GRANULAR_KEYS);
    for (const key of Object.keys(granular)) boolean(document, [...path, 'granular', key], granular[key]);
    // Each key was checked above: a known prompt kind with a boolean value.
    return { granular: granularApprovalConfig(granular as Record<string, boolean>) };
  }
  throw document.error(
    path,
    `${formatKeyPath(path)} must be one of ${simpleApprovalPolicies.join(', ')} or a table { granular = { … } }, got ${describe(value)}`,
  );
}

function boolean(document: TomlDocument, path: readonly string[], value: unknown): boolean {
  if (value === undefined) return false;
  if (typeof value !== 'boolean')
    throw document.error(path, `${formatKeyPath(path)} must be true or false, got ${describe(value)}`);
  return value;
}

function absolutePaths(document: TomlDocument, path: readonly string[], value: unknown): string[] {
  if (value === undefined) return [];
  const items = strings(document, path, value);
  items.forEach((item, index) => {
    if (!isAbsolutePath(item))
      throw document.error(
        [...path, index],
        `${formatKeyPath([...path, index])} must be an absolute path, got "${item}"`,
      );
  });
  return items;
}
