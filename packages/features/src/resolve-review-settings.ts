import { ConfigError, formatLocation } from '@ux/protocol/core';
import type { Requirements } from './requirements.js';
import type { Chosen } from './resolve-session-settings.js';
import type { ApprovalsReviewer, ReviewCommandConfig } from './review-settings.js';
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
}

/**
 * The reviewer chain's configuration: hooks from both files (the requirements' first, and a user
 * config can add hooks but never remove those), `approvals_reviewer` (default `user`, or the first
 * value `allowed_approvals_reviewers` allows), and the `[auto_review]` command. A choice the
 * requirements do not allow, an `[auto_review]` in the config when the requirements define one, and
 * `auto_review` without an `[auto_review]` command are `ConfigError`s naming file:line.
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
  return { hooks, approvalsReviewer, ...(autoReview ? { autoReview } : {}) };
}
