import { didYouMean } from '@ux/protocol/core';
import { describe, isTable } from './feature-table.js';
import { rejectUnknownKeys } from './reject-unknown-keys.js';
import type { Located } from './session-settings.js';
import { strings } from './strings.js';
import { formatKeyPath, type SourceLocation, type TomlDocument } from './toml-document.js';

/** Who answers approvals under `on-request` and `granular`: the person, or the `[auto_review]` command. */
export type ApprovalsReviewer = 'user' | 'auto_review';
export const approvalsReviewers = ['user', 'auto_review'] as const satisfies readonly ApprovalsReviewer[];

/**
 * Where approval questions for a person go: `client` (the MCP client's elicitation only), `inbox` (the
 * approvals inbox, answered with `ux approvals`), `client-then-inbox` (the client when it can be asked,
 * else the inbox).
 */
export type ApprovalsVia = 'client' | 'inbox' | 'client-then-inbox';
export const approvalsVias = [
  'client',
  'inbox',
  'client-then-inbox',
] as const satisfies readonly ApprovalsVia[];
export const DEFAULT_APPROVALS_VIA: ApprovalsVia = 'client-then-inbox';
/** The longest `approval_timeout_s`: a day. */
export const MAX_APPROVAL_TIMEOUT_SECONDS = 86_400;

/**
 * A command that answers one JSON question: a `[[hooks.permission_request]]` entry or the
 * `[auto_review]` reviewer. `timeoutMs` is the `timeout` written in seconds, or the default.
 */
export interface ReviewCommandConfig {
  command: string[];
  timeoutMs: number;
  /** `name`: how messages call it; default the program's file name. */
  name?: string;
  /** Where its table starts. */
  location: SourceLocation;
}

/** The reviewer-chain keys of a config or requirements file. */
export interface ReviewConfig {
  /** `[[hooks.permission_request]]`, in the order written. */
  hooks: ReviewCommandConfig[];
  /** `[auto_review]`, when it has a `command` (a table with `strict` alone adds none). */
  autoReview?: ReviewCommandConfig;
  /**
   * `[auto_review] strict`: every command, even one policy runs without asking, and every retry goes
   * to the automatic reviewer, without permission hooks. In requirements, `true` pins it on.
   */
  autoReviewStrict?: Located<boolean>;
  /** `approvals_reviewer` (config.toml only). */
  approvalsReviewer?: Located<ApprovalsReviewer>;
  /** `approvals_via`: where a person's questions go. In requirements, it pins the choice. */
  approvalsVia?: Located<ApprovalsVia>;
  /** `approval_timeout_s`: how long a question waits for a person. In requirements, it pins the value. */
  approvalTimeoutS?: Located<number>;
}

export const REVIEW_KEYS = [
  'hooks',
  'auto_review',
  'approvals_reviewer',
  'approvals_via',
  'approval_timeout_s',
] as const;
export const DEFAULT_HOOK_TIMEOUT_SECONDS = 30;
export const DEFAULT_AUTO_REVIEW_TIMEOUT_SECONDS = 60;
export const MAX_REVIEW_TIMEOUT_SECONDS = 600;

const HOOK_EVENTS = ['permission_request'];
const COMMAND_KEYS = ['command', 'timeout', 'name'];
const AUTO_REVIEW_KEYS = [...COMMAND_KEYS, 'strict'];

/**
 * Reads `[[hooks.permission_request]]`, `[auto_review]` and (unless `approvalsReviewer` is false, as in
 * requirements) `approvals_reviewer`. An `[auto_review]` table needs a `command` unless it holds
 * `strict` alone (strict review of a reviewer defined elsewhere: the requirements' or the user's).
 * Every mistake is a `ConfigError` at file:line:column.
 */
export function parseReviewConfig(
  document: TomlDocument,
  options: { approvalsReviewer: boolean } = { approvalsReviewer: true },
): ReviewConfig {
  const root = document.value;
  const config: ReviewConfig = { hooks: [] };

  if (root.hooks !== undefined) {
    if (!isTable(root.hooks))
      throw document.error(
        ['hooks'],
        `hooks must be a table of hook lists, such as [[hooks.permission_request]], got ${describe(root.hooks)}`,
      );
    rejectUnknownKeys(document, ['hooks'], root.hooks, HOOK_EVENTS);
    const list = root.hooks.permission_request;
    if (list !== undefined) {
      const path = ['hooks', 'permission_request'];
      if (!Array.isArray(list) || !list.every(isTable))
        throw document.error(
          path,
          `hooks.permission_request must be a list of tables: write each hook as [[hooks.permission_request]] (two brackets) with command = ["program", "arg"]`,
        );
      config.hooks = list.map((_, index) =>
        parseReviewCommand(document, [...path, index], DEFAULT_HOOK_TIMEOUT_SECONDS),
      );
    }
  }

  if (root.auto_review !== undefined) {
    if (!isTable(root.auto_review))
      throw document.error(
        ['auto_review'],
        `auto_review must be a table ([auto_review] with command = ["program", "arg"]), got ${describe(root.auto_review)}`,
      );
    const table = root.auto_review;
    if (table.strict !== undefined) {
      if (typeof table.strict !== 'boolean')
        throw document.error(
          ['auto_review', 'strict'],
          `auto_review.strict must be true or false, got ${describe(table.strict)}`,
        );
      config.autoReviewStrict = {
        value: table.strict,
        location: document.locate(['auto_review', 'strict']),
      };
    }
    const strictAlone = Object.keys(table).length === 1 && table.strict !== undefined;
    if (!strictAlone)
      config.autoReview = parseReviewCommand(
        document,
        ['auto_review'],
        DEFAULT_AUTO_REVIEW_TIMEOUT_SECONDS,
        AUTO_REVIEW_KEYS,
      );
  }

  if (options.approvalsReviewer && root.approvals_reviewer !== undefined) {
    const value = root.approvals_reviewer;
    if (typeof value !== 'string' || !(approvalsReviewers as readonly string[]).includes(value))
      throw document.error(
        ['approvals_reviewer'],
        `approvals_reviewer must be one of ${approvalsReviewers.map((v) => `"${v}"`).join(', ')}, got ${describe(value)}${
          typeof value === 'string' ? didYouMean(value, approvalsReviewers) : ''
        }`,
      );
    config.approvalsReviewer = {
      value: value as ApprovalsReviewer,
      location: document.locate(['approvals_reviewer']),
    };
  }

  if (root.approvals_via !== undefined) {
    const value = root.approvals_via;
    if (typeof value !== 'string' || !(approvalsVias as readonly string[]).includes(value))
      throw document.error(
        ['approvals_via'],
        `approvals_via must be one of ${approvalsVias.map((v) => `"${v}"`).join(', ')}, got ${describe(value)}${
          typeof value === 'string' ? didYouMean(value, approvalsVias) : ''
        }`,
      );
    config.approvalsVia = { value: value as ApprovalsVia, location: document.locate(['approvals_via']) };
  }
  if (root.approval_timeout_s !== undefined) {
    const value = root.approval_timeout_s;
    if (
      typeof value !== 'number' ||
      !Number.isInteger(value) ||
      value <= 0 ||
      value > MAX_APPROVAL_TIMEOUT_SECONDS
    )
      throw document.error(
        ['approval_timeout_s'],
        `approval_timeout_s must be a whole number of seconds from 1 to ${MAX_APPROVAL_TIMEOUT_SECONDS}, got ${describe(value)} (leave it out to wait until someone answers)`,
      );
    config.approvalTimeoutS = { value, location: document.locate(['approval_timeout_s']) };
  }
  return config;
}

function parseReviewCommand(
  document: TomlDocument,
  path: readonly (string | number)[],
  defaultTimeoutSeconds: number,
  knownKeys: readonly string[] = COMMAND_KEYS,
): ReviewCommandConfig {
  let table: unknown = document.value;
  for (const key of path) table = (table as Record<string | number, unknown>)[key];
  const body = table as Record<string, unknown>;
  const label = formatKeyPath(path);
  for (const key of Object.keys(body)) {
    if (knownKeys.includes(key)) continue;
    const keyPath = [...path, key];
    const elsewhere = key === 'strict' ? '; strict is a setting of [auto_review] only' : '';
    throw document.error(
      keyPath,
      `unknown key ${formatKeyPath(keyPath)}${didYouMean(key, knownKeys) || `${elsewhere}; known keys here: ${knownKeys.join(', ')}`}`,
    );
  }

  if (body.command === undefined)
    throw document.error(
      path,
      `${label} needs command = ["program", "arg", …] (the program and its arguments, run without a shell)`,
    );
  if (!Array.isArray(body.command) || body.command.length === 0)
    throw document.error(
      [...path, 'command'],
      `${label}.command must be a non-empty array of strings (the program and its arguments, run without a shell), got ${describe(body.command)}`,
    );
  const command = strings(document, [...path, 'command'], body.command);

  let timeoutSeconds = defaultTimeoutSeconds;
  if (body.timeout !== undefined) {
    const timeout = body.timeout;
    if (
      typeof timeout !== 'number' ||
      !Number.isFinite(timeout) ||
      timeout <= 0 ||
      timeout > MAX_REVIEW_TIMEOUT_SECONDS
    )
      throw document.error(
        [...path, 'timeout'],
        `${label}.timeout must be a number of seconds greater than 0 and at most ${MAX_REVIEW_TIMEOUT_SECONDS}, got ${describe(timeout)}`,
      );
    timeoutSeconds = timeout;
  }

  let name: string | undefined;
  if (body.name !== undefined) {
    if (typeof body.name !== 'string' || body.name.trim() === '' || body.name.length > 64)
      throw document.error(
        [...path, 'name'],
        `${label}.name must be a non-empty string of at most 64 characters, got ${describe(body.name)}`,
      );
    name = body.name;
  }
  return {
    command,
    timeoutMs: Math.round(timeoutSeconds * 1000),
    ...(name === undefined ? {} : { name }),
    location: document.locate(path),
  };
}
