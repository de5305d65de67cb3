import { ConfigError, formatLocation } from '@ux/protocol/core';
import type { Requirements } from './requirements.js';
import type { Chosen } from './resolve-session-settings.js';
import {
  type ApprovalsReviewer,
  type ApprovalsVia,
  DEFAULT_APPROVALS_VIA,
  type ReviewCommandConfig,
} from './review-settings.js';
import type { Located } from './session-settings.js';
import type { UserConfig } from './user-config.js';

/** A hook or reviewer command in effect, and where it came from. */
export interface ResolvedReviewCommand extends ReviewCommandConfig {
  /** `file:line:column` of its table. */
  source: string;
  /** Defined by the managed requirements: no user config can remove or replace it. */
  managed: boolean;
}

export interface ReviewResolution {
  /** Permission hooks in the order they run: the requirements' (always), then the user's. */
  hooks: ResolvedReviewCommand[];
  /**
   * Who answers under `on-request` and `granular`. `auto_review` always comes with `autoReview`;
   * under the other approval policies the user is asked (as in Codex).
   */
  approvalsReviewer: Chosen<ApprovalsReviewer>;
  /** The `[auto_review]` command: the requirements', else the user's. */
  autoReview?: ResolvedReviewCommand;
  /**
   * `[auto_review] strict`: every approval, even for a command policy runs without asking, goes to
   * `autoReview` (which then always exists), hooks skipped, whatever `approvalsReviewer` says. Default
   * false; `strict = true` in the requirements pins it on.
   */
  strict: Chosen<boolean>;
  /**
   * Where a person's questions go (default `client-then-inbox`); `pinned` when the requirements set it.
   */
  approvalsVia: Chosen<ApprovalsVia> & { pinned: boolean };
  /**
   * How long a question waits for a person, in seconds; `null` (the default): until someone answers or
   * the call is cancelled. `pinned` when the requirements set it.
   */
  approvalTimeoutS: Chosen<number | null> & { pinned: boolean };
}

/**
 * The reviewer chain's configuration: hooks from both files (the requirements' first, and a user
 * config can add hooks but never remove those), `approvals_reviewer` (default `user`, or the first
 * value `allowed_approvals_reviewers` allows), the `[auto_review]` command and its `strict` switch
 * (the config's, unless the requirements pin `strict = true`). A choice the requirements do not
 * allow, an `[auto_review]` command in the config when the requirements define one, `strict = false`
 * against the requirements' `strict = true`, and `auto_review` or `strict = true` without an
 * `[auto_review]` command are `ConfigError`s naming file:line.
 */
export function resolveReviewSettings(input: {
  user?: UserConfig;
  requirements?: Requirements;
}): ReviewResolution {
  const { user, requirements } = input;
  const resolved = (config: ReviewCommandConfig, managed: boolean): ResolvedReviewCommand => ({
    ...config,
    source: formatLocation(config.location),
    managed,
  });
  const hooks = [
    ...(requirements?.review.hooks ?? []).map((hook) => resolved(hook, true)),
    ...(user?.review.hooks ?? []).map((hook) => resolved(hook, false)),
  ];

  const managedStrict = requirements?.review.autoReviewStrict;
  const userStrict = user?.review.autoReviewStrict;
  if (managedStrict?.value === true && userStrict?.value === false)
    throw new ConfigError({
      ...managedStrict.location,
      reason: `auto_review.strict = false (from ${formatLocation(userStrict.location)}) is not allowed here: the managed requirements pin auto_review.strict = true, and a user config cannot turn it off; remove strict = false`,
    });
  // The requirements can only require strict review: their `strict = false` leaves the choice to the config.
  const strict: Chosen<boolean> =
    managedStrict?.value === true
      ? { value: true, source: formatLocation(managedStrict.location) }
      : userStrict
        ? { value: userStrict.value, source: formatLocation(userStrict.location) }
        : { value: false, source: managedStrict ? formatLocation(managedStrict.location) : 'default' };

  const managedReview = requirements?.review.autoReview;
  const userReview = user?.review.autoReview;
  if (managedReview && userReview)
    throw new ConfigError({
      ...userReview.location,
      reason: `[auto_review] is set by the managed requirements at ${formatLocation(managedReview.location)} and cannot be replaced here; remove this [auto_review] table`,
    });
  const autoReview = managedReview
    ? resolved(managedReview, true)
    : userReview
      ? resolved(userReview, false)
      : undefined;

  const allowed = requirements?.allowedApprovalsReviewers;
  const written = user?.review.approvalsReviewer;
  const approvalsReviewer: Chosen<ApprovalsReviewer> = written
    ? { value: written.value, source: formatLocation(written.location) }
    : {
        value: !allowed || allowed.values.includes('user') ? 'user' : allowed.values[0]!,
        source: allowed ? formatLocation(allowed.location) : 'default',
      };
  if (allowed && !allowed.values.includes(approvalsReviewer.value))
    throw new ConfigError({
      ...allowed.location,
      reason: `approvals reviewer "${approvalsReviewer.value}" (from ${approvalsReviewer.source}) is not allowed here: allowed_approvals_reviewers = [${allowed.values
        .map((value) => `"${value}"`)
        .join(', ')}]`,
    });
  if (approvalsReviewer.value === 'auto_review' && !autoReview)
    throw new ConfigError({
      ...(written?.location ?? allowed?.location ?? { file: 'approvals_reviewer' }),
      reason: `approvals_reviewer = "auto_review" (from ${approvalsReviewer.source}) needs an automatic reviewer: add an [auto_review] table with command = ["program", "arg"] (it reads the approval request as JSON on stdin and answers {"decision":"allow"} or {"decision":"deny","message":"…"})`,
    });
  if (strict.value && !autoReview)
    throw new ConfigError({
      ...(managedStrict?.value === true ? managedStrict.location : userStrict!.location),
      reason: `auto_review.strict = true (from ${strict.source}) needs an automatic reviewer: add command = ["program", "arg"] to the [auto_review] table (it reads the approval request as JSON on stdin and answers {"decision":"allow"} or {"decision":"deny","message":"…"})`,
    });
  const approvalsVia = pinned(
    'approvals_via',
    requirements?.review.approvalsVia,
    user?.review.approvalsVia,
    DEFAULT_APPROVALS_VIA,
  );
  const approvalTimeoutS = pinned<number | null>(
    'approval_timeout_s',
    requirements?.review.approvalTimeoutS,
    user?.review.approvalTimeoutS,
    null,
  );
  return {
    hooks,
    approvalsReviewer,
    ...(autoReview ? { autoReview } : {}),
    strict,
    approvalsVia,
    approvalTimeoutS,
  };
}

/**
 * A setting the requirements may pin: their value wins, and a user value that differs is a
 * `ConfigError` at the user's line naming the requirements' (the same value is allowed).
 */
function pinned<T>(
  key: string,
  managed: Located<T> | undefined,
  user: Located<T> | undefined,
  fallback: T,
): Chosen<T> & { pinned: boolean } {
  if (managed) {
    if (user && user.value !== managed.value)
      throw new ConfigError({
        ...user.location,
        reason: `${key} = ${JSON.stringify(user.value)} is not allowed here: the managed requirements pin ${key} = ${JSON.stringify(managed.value)} at ${formatLocation(managed.location)}, and a user config cannot change it; remove this line`,
      });
    return { value: managed.value, source: formatLocation(managed.location), pinned: true };
  }
  if (user) return { value: user.value, source: formatLocation(user.location), pinned: false };
  return { value: fallback, source: 'default', pinned: false };
}
