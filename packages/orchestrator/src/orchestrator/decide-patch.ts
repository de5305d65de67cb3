import { homedir } from 'node:os';
import {
  type ApprovalPolicy,
  type ApprovalRequest,
  approvalPolicyName,
  type EffectivePolicy,
} from '@ux/protocol/core';
import {
  globToRegExp,
  isUnder,
  nodeFsView,
  protectedEntryFor,
  readableText,
  resolveSandboxLayout,
} from '@ux/protocol-utils';
import { ApprovalAbortedError } from '../approval/approval-aborted-error.js';
import { type ReviewerChain, requestApproval } from '../approval/request-approval.js';

/** An intercepted `apply_patch`: the files it would write or remove. */
export interface PatchDecisionRequest {
  callId: string;
  turnId?: string;
  /** Where the patch applies. */
  cwd: string;
  /** The session directory (`project_roots`). */
  projectRoot: string;
  /** Every absolute path the patch writes or removes (Move to targets included). */
  paths: readonly string[];
  /** The patch as a person reads it (`A new.txt`, `M src/x.ts`, …), shown when asking. */
  summary: string;
  signal?: AbortSignal;
}

export type PatchDecision =
  | { action: 'apply'; autoApproved: boolean }
  | {
      action: 'refuse';
      reason: string;
      aborted?: boolean;
      /** The reviewer chain's refusal (a `RejectedError`: who decided), when someone was asked. */
      cause?: unknown;
    };

export interface PatchDecider {
  approvalPolicy: ApprovalPolicy;
  policy: EffectivePolicy;
  chain: ReviewerChain;
  reviewer: 'auto' | 'user';
  newApprovalId: () => string;
  announce: (request: ApprovalRequest) => void;
}

export const PATCH_OUTSIDE_NEVER =
  'writing outside of the writable roots; rejected by user approval settings (approval policy never)';

/**
 * Whether an intercepted `apply_patch` may write (Codex's patch safety, with ux's protected paths): a
 * path the policy hides (deny-read) or protects (git configuration and hooks, agent metadata,
 * start-up files) is refused, whatever anyone answers; every path inside the writable roots applies
 * without a question (except under `untrusted`, which always asks); anything else is asked, and under
 * `never` refused. The door writes the files itself, so an approved patch writes outside the sandbox.
 */
export async function decidePatch(
  decider: PatchDecider,
  request: PatchDecisionRequest,
): Promise<PatchDecision> {
  if (request.paths.length === 0) return { action: 'refuse', reason: 'the patch changes no file' };
  const layout = resolveSandboxLayout(
    decider.policy,
    { cwd: request.cwd, projectRoots: [request.projectRoot] },
    nodeFsView(),
    { homeDir: homedir(), pathDirectories: (process.env.PATH ?? '').split(':') },
  );
  const unrestricted = decider.policy.fileSystem.kind !== 'restricted';
  const globs = layout.unreadableGlobs.map((pattern) => globToRegExp(pattern));
  const outside: string[] = [];
  for (const path of request.paths) {
    if (layout.unreadable.some((hidden) => isUnder(path, hidden)) || globs.some((glob) => glob.test(path)))
      return {
        action: 'refuse',
        reason: `${readableText(path)} is hidden by the deny-read policy; the patch was not applied`,
      };
    // Protected when any writable root that holds it protects it: a workspace inside /tmp keeps its
    // own .git/config read-only though /tmp, the outer root, has no such entry.
    const protectedEntry = protectedEntryFor(layout, path);
    if (protectedEntry)
      return {
        action: 'refuse',
        reason: `${readableText(path)} is protected (${protectedEntry.why}); the patch was not applied`,
      };
    const writable = layout.writableRoots.some((candidate) => isUnder(path, candidate.root));
    if (!writable && !unrestricted) outside.push(path);
  }

  const policy = approvalPolicyName(decider.approvalPolicy);
  if (outside.length === 0 && policy !== 'untrusted') return { action: 'apply', autoApproved: true };
  if (outside.length > 0 && policy === 'never') return { action: 'refuse', reason: PATCH_OUTSIDE_NEVER };

  const id = decider.newApprovalId();
  const question: ApprovalRequest = {
    call_id: request.callId,
    ...(request.turnId ? { turn_id: request.turnId } : {}),
    command: ['apply_patch', ...request.paths],
    display_command: request.summary.split('\n').join(', '),
    cwd: request.cwd,
    policy_reason:
      outside.length > 0
        ? `the patch writes outside the writable roots: ${outside.join(', ')}`
        : 'approval policy "untrusted": every patch is asked about',
    unsandboxed: outside.length > 0 ? 'now' : 'never',
    retry: false,
    available_decisions: ['approved', 'denied', 'abort'],
  };
  decider.announce(question);
  try {
    await requestApproval(decider.chain, {
      request: question,
      hookRequest: {
        tool: 'Bash',
        command: `apply_patch ${request.paths.join(' ')}`,
        argv: ['apply_patch', ...request.paths],
        cwd: request.cwd,
        phase: 'initial',
        call_id: request.callId,
      },
      hooks: 'allow_and_deny',
      reviewer: decider.reviewer,
      // Every patch is asked about on its own: never answered from the session's cache.
      cacheKey: `patch:${id}`,
      signal: request.signal ?? new AbortController().signal,
    });
  } catch (error) {
    if (ApprovalAbortedError.isInstance(error))
      return { action: 'refuse', reason: 'aborted by the user', aborted: true };
    return { action: 'refuse', reason: error instanceof Error ? error.message : String(error), cause: error };
  }
  return { action: 'apply', autoApproved: false };
}
