import {
  type ApprovalPolicyName,
  approvalPolicyNames,
  ConfigError,
  didYouMean,
  formatLocation,
  type SandboxMode,
  sandboxModes,
} from '@ux/protocol/core';
import { parseDenyReadEntries } from './deny-read-entries.js';
import {
  ENVIRONMENT_NAME,
  ENVIRONMENT_NAME_RULE,
  parseEnvironments,
  type RemoteEnvironmentConfig,
} from './environment-config.js';
import { describe, type FeatureTable, parseFeatureTable } from './feature-table.js';
import { type NetworkSetting, parseNetworkSetting, parseUnixSocketEntries } from './network-setting.js';
import { rejectUnknownKeys } from './reject-unknown-keys.js';
import {
  type ApprovalsReviewer,
  approvalsReviewers,
  parseReviewConfig,
  type ReviewConfig,
} from './review-settings.js';
import {
  parseSandboxPluginList,
  parseSandboxTables,
  type SandboxSettingsTable,
} from './sandbox-plugin-config.js';
import type { Located } from './session-settings.js';
import { formatKeyPath, type SourceLocation, type TomlDocument } from './toml-document.js';

/**
 * Managed requirements (`$UX_REQUIREMENTS`, default `/etc/ux/requirements.toml`): values an
 * administrator pins, which no lower layer can change, and what users may choose from.
 */
export interface Requirements {
  file: string;
  /** Pinned feature values (layer `managed`). */
  features: FeatureTable;
  allowedApprovalPolicies?: { values: ApprovalPolicyName[]; location: SourceLocation };
  allowedSandboxModes?: { values: SandboxMode[]; location: SourceLocation };
  allowedSandboxBackends?: { values: string[]; location: SourceLocation };
  /** `sandbox_plugins`: backends every session loads (paths relative to this file); always allowed. */
  sandboxPlugins?: { values: Located<string>[]; location: SourceLocation };
  /**
   * `allowed_sandbox_plugins`: the only plugin modules a user's `sandbox_plugins` may load, as package
   * names or paths (relative to this file); an entry allows what it resolves to, so a user cannot shadow
   * it. Empty: users load none. The shipped backends are part of ux and always load (limit their use
   * with `allowed_sandbox_backends`).
   */
  allowedSandboxPlugins?: { values: Located<string>[]; location: SourceLocation };
  /**
   * `[sandbox.<id>]`: backend settings the administrator pins. They are merged over the user's table
   * of that id; a user key that gives a pinned key another value is an error.
   */
  sandbox: Record<string, SandboxSettingsTable>;
  /** Paths and globs no sandboxed command may read, whatever the user's config or flags say. */
  denyRead?: { values: string[]; location: SourceLocation };
  /**
   * `network`: the widest network sandboxed commands may have. `"off"`: none; `"on"`: no cap; by
   * domain: user allow entries must fall under these, these deny entries always apply, and
   * `ask_unknown = false` denies hosts outside the allow list without a question.
   */
  network?: { value: NetworkSetting; location: SourceLocation };
  /** `allow_unix_sockets`: the only unix sockets a session may allow (as written; `~/…` expanded on resolution). */
  allowUnixSockets?: { values: string[]; location: SourceLocation };
  /** The only environment names a session may use (`local` among them or not). */
  allowedEnvironments?: { values: string[]; location: SourceLocation };
  /** `[environments.<name>]` the administrator defines, sorted by name; no user config can redefine them. */
  environments: RemoteEnvironmentConfig[];
  /** `allowed_approvals_reviewers`: who may answer approvals (`["auto_review"]` pins the automatic reviewer). */
  allowedApprovalsReviewers?: { values: ApprovalsReviewer[]; location: SourceLocation };
  /**
   * `[[hooks.permission_request]]` that always run (before the user's, which cannot remove them) and
   * `[auto_review]`, the automatic reviewer no user config can replace; `approvals_via` and
   * `approval_timeout_s`, pinned (a user config may repeat them but not change them).
   */
  review: Omit<ReviewConfig, 'approvalsReviewer'>;
  warnings: string[];
}

const KEYS = [
  'features',
  'allowed_approval_policies',
  'allowed_sandbox_modes',
  'allowed_sandbox_backends',
  'sandbox_plugins',
  'allowed_sandbox_plugins',
  'sandbox',
  'deny_read',
  'network',
  'allow_unix_sockets',
  'allowed_environments',
  'environments',
  'allowed_approvals_reviewers',
  'hooks',
  'auto_review',
  'approvals_via',
  'approval_timeout_s',
];

const BACKEND_ID = { pattern: /^[a-z][a-z0-9-]*$/, rule: 'a backend id (lowercase letters, digits, dashes)' };
const ENVIRONMENT_ID = { pattern: ENVIRONMENT_NAME, rule: `an environment name (${ENVIRONMENT_NAME_RULE})` };

export function parseRequirements(document: TomlDocument): Requirements {
  const root = document.value;
  rejectUnknownKeys(document, [], root, KEYS);
  const features = parseFeatureTable(document, ['features'], 'managed');
  const allowedEnvironments = stringList(document, 'allowed_environments', undefined, ENVIRONMENT_ID);
  const environments = parseEnvironments(document, ['environments']);
  for (const environment of environments) {
    if (allowedEnvironments && !allowedEnvironments.values.includes(environment.id))
      throw document.error(
        ['environments', environment.id],
        `environments.${environment.id} is defined here but not listed in allowed_environments (${formatLocation(allowedEnvironments.location)}); add "${environment.id}" there or remove the definition`,
      );
  }
  return {
    file: document.file,
    features,
    allowedApprovalPolicies: stringList(document, 'allowed_approval_policies', approvalPolicyNames),
    allowedSandboxModes: stringList(document, 'allowed_sandbox_modes', sandboxModes),
    allowedSandboxBackends: stringList(document, 'allowed_sandbox_backends', undefined, BACKEND_ID),
    sandboxPlugins: parseSandboxPluginList(document, 'sandbox_plugins', { allowEmpty: true }),
    allowedSandboxPlugins: parseSandboxPluginList(document, 'allowed_sandbox_plugins', { allowEmpty: true }),
    sandbox: parseSandboxTables(document, 'sandbox'),
    denyRead:
      root.deny_read === undefined
        ? undefined
        : {
            values: parseDenyReadEntries(document, ['deny_read'], root.deny_read),
            location: document.locate(['deny_read']),
          },
    network:
      root.network === undefined
        ? undefined
        : {
            value: parseNetworkSetting(document, ['network'], root.network),
            location: document.locate(['network']),
          },
    allowUnixSockets:
      root.allow_unix_sockets === undefined
        ? undefined
        : {
            values: parseUnixSocketEntries(document, ['allow_unix_sockets'], root.allow_unix_sockets),
            location: document.locate(['allow_unix_sockets']),
          },
    allowedEnvironments,
    environments,
    allowedApprovalsReviewers: stringList(document, 'allowed_approvals_reviewers', approvalsReviewers),
    review: parseReviewConfig(document, { approvalsReviewer: false }),
    warnings: [...features.warnings],
  };
}

function stringList<T extends string>(
  document: TomlDocument,
  key: string,
  allowed: readonly T[] | undefined,
  shape?: { pattern: RegExp; rule: string },
): { values: T[]; location: SourceLocation } | undefined {
  const value = document.value[key];
  if (value === undefined) return undefined;
  if (!Array.isArray(value))
    throw document.error([key], `${key} must be an array of strings, got ${describe(value)}`);
  if (value.length === 0) throw document.error([key], `${key} must allow at least one value`);
  value.forEach((item, index) => {
    const path = [key, index];
    if (typeof item !== 'string')
      throw document.error(path, `${formatKeyPath(path)} must be a string, got ${describe(item)}`);
    if (allowed && !allowed.includes(item as T)) {
      throw document.error(
        path,
        `${formatKeyPath(path)}: unknown value "${item}"${didYouMean(item, allowed)}; expected one of ${allowed.join(', ')}`,
      );
    }
    if (shape && !shape.pattern.test(item)) {
      throw document.error(path, `${formatKeyPath(path)}: "${item}" is not ${shape.rule}`);
    }
  });
  return { values: value as T[], location: document.locate([key]) };
}

/** A choice to check against requirements, with where it was made (a file or a flag). */
export interface RequirementChoice {
  approvalPolicy?: { value: ApprovalPolicyName; source: string };
  sandboxMode?: { value: SandboxMode; source: string };
  sandboxBackend?: { value: string; source: string };
}

/** Refuses a choice the requirements do not allow, naming both the choice's source and the requirements file. */
export function checkRequirements(requirements: Requirements | undefined, choice: RequirementChoice): void {
  if (!requirements) return;
  const checks = [
    [
      'approval policy',
      choice.approvalPolicy,
      requirements.allowedApprovalPolicies,
      'allowed_approval_policies',
    ],
    ['sandbox mode', choice.sandboxMode, requirements.allowedSandboxModes, 'allowed_sandbox_modes'],
    [
      'sandbox backend',
      choice.sandboxBackend,
      requirements.allowedSandboxBackends,
      'allowed_sandbox_backends',
    ],
  ] as const;
  for (const [what, chosen, allowed, key] of checks) {
    if (!chosen || !allowed) continue;
    if ((allowed.values as readonly string[]).includes(chosen.value)) continue;
    throw new ConfigError({
      ...allowed.location,
      reason: `${what} "${chosen.value}" (from ${chosen.source}) is not allowed here: ${key} = [${allowed.values
        .map((v) => `"${v}"`)
        .join(', ')}]`,
    });
  }
}
