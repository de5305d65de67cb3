import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { ResolvedReviewCommand } from '@ux/config';
import { approvalPolicyName } from '@ux/protocol/core';
import type { CliSession } from './cli-session.js';
import { findNotifier } from './desktop-notification.js';
import type { DoctorCheck } from './doctor-command.js';

/**
 * The reviewer chain as `ux exec` and `ux mcp` compose it: each permission hook and the automatic
 * reviewer, with where it came from. A program that cannot be found is a `fail`: hooks and the
 * reviewer fail closed, so every command that needs approval would be refused.
 */
export function doctorReviewChecks(session: CliSession, env: NodeJS.ProcessEnv): DoctorCheck[] {
  const { review, settings } = session;
  const checks: DoctorCheck[] = [];
  if (review.hooks.length === 0) {
    checks.push({
      name: 'permission hooks',
      status: 'ok',
      detail: 'none ([[hooks.permission_request]] in config.toml or the requirements adds one)',
    });
  }
  review.hooks.forEach((hook, index) => {
    checks.push(
      commandCheck(
        `permission hook ${index + 1}`,
        hook,
        env,
        'every command that needs approval would be denied',
      ),
    );
  });

  const reviewer = review.approvalsReviewer;
  const policy = approvalPolicyName(settings.approvalPolicy.value);
  // Strict review sends every approval to the automatic reviewer, whatever the policy or reviewer choice.
  const strict = review.strict.value;
  if (reviewer.value === 'user') {
    checks.push({
      name: 'approvals reviewer',
      status: 'ok',
      detail: `user (${reviewer.source})${
        !review.autoReview
          ? ''
          : strict
            ? `; strict: every approval goes to the automatic reviewer instead (${review.strict.source})`
            : `; [auto_review] at ${review.autoReview.source} is not used`
      }`,
    });
  } else {
    const routed = strict || policy === 'on-request' || policy === 'granular';
    checks.push({
      name: 'approvals reviewer',
      status: routed ? 'ok' : 'warn',
      detail: `auto_review (${reviewer.source})${
        routed
          ? ''
          : `; the approval policy ${policy} (${settings.approvalPolicy.source}) asks the user: the automatic reviewer answers under on-request and granular only`
      }`,
      ...(routed ? {} : { fix: 'set approval_policy = "on-request" to let the automatic reviewer answer' }),
    });
  }
  checks.push(approvalRoutingCheck(session, env));
  if (review.autoReview) {
    checks.push(
      commandCheck(
        'automatic reviewer',
        review.autoReview,
        env,
        strict
          ? 'every command would be refused'
          : reviewer.value === 'auto_review'
            ? 'every approval it is asked would be refused'
            : undefined,
        strict
          ? `; strict (${review.strict.source}): every command, even one that runs without asking, and every retry goes to it, permission hooks skipped`
          : '',
      ),
    );
  }
  return checks;
}

/**
 * Where a person's questions go (`approvals_via`), how long they wait (`approval_timeout_s`), with
 * where each was set, and whether a desktop notifier is there.
 */
function approvalRoutingCheck(session: CliSession, env: NodeJS.ProcessEnv): DoctorCheck {
  const { approvalsVia, approvalTimeoutS } = session.review;
  const pinned = (setting: { pinned: boolean }) =>
    setting.pinned ? ', pinned by the managed requirements' : '';
  const route =
    approvalsVia.value === 'client'
      ? "the MCP client's elicitation only (a client without it: refused)"
      : approvalsVia.value === 'inbox'
        ? 'the approvals inbox (ux approvals)'
        : 'the MCP client when it can show questions, else the approvals inbox (ux approvals)';
  const wait =
    approvalTimeoutS.value === null
      ? 'a question waits until someone answers or the call is cancelled'
      : `a question unanswered within ${approvalTimeoutS.value} s is refused ("nobody answered within ${approvalTimeoutS.value} s")`;
  const notifier = findNotifier(env);
  return {
    name: 'approvals routing',
    status: 'ok',
    detail: `approvals_via = "${approvalsVia.value}" (${approvalsVia.source}${pinned(approvalsVia)}): ${route}; approval_timeout_s: ${
      approvalTimeoutS.value ?? 'none'
    } (${approvalTimeoutS.source}${pinned(approvalTimeoutS)}): ${wait}; desktop notification: ${
      notifier ? notifier : 'none (notify-send is not on PATH; ux approvals --watch rings the bell)'
    }`,
  };
}

function commandCheck(
  name: string,
  config: ResolvedReviewCommand,
  env: NodeJS.ProcessEnv,
  consequence: string | undefined,
  mode = '',
): DoctorCheck {
  const label = config.name === undefined ? '' : `"${config.name}" `;
  const detail = `${label}${JSON.stringify(config.command)}, timeout ${config.timeoutMs / 1000} s (${config.source}${
    config.managed ? ', required by the managed requirements' : ''
  })${mode}`;
  const problem = programProblem(config.command[0]!, env);
  if (!problem) return { name, status: 'ok', detail };
  return {
    name,
    status: consequence ? 'fail' : 'warn',
    detail: `${detail}: ${problem}${consequence ? `; ${consequence}` : ''}`,
    fix: `install ${config.command[0]} or correct command at ${config.source}`,
  };
}

/** Why `program` cannot be run (absolute, relative to the working directory, or found on PATH). */
function programProblem(program: string, env: NodeJS.ProcessEnv): string | undefined {
  if (program.includes('/')) return executableProblem(program);
  const directories = (env.PATH ?? '').split(delimiter).filter((entry) => isAbsolute(entry));
  for (const directory of directories) {
    if (executableProblem(join(directory, program)) === undefined) return undefined;
  }
  return `${program} is not on PATH`;
}

function executableProblem(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return `${path} is not a file`;
    accessSync(path, constants.X_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === 'ENOENT'
      ? `${path} does not exist`
      : code === 'EACCES'
        ? `${path} is not executable`
        : `${path} cannot be used (${code})`;
  }
}
