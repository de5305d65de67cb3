import { reviewDecisionSchema } from '@ux/protocol';
import type { ApprovalRequest } from '@ux/protocol/core';
import { NoReviewerError, REVIEWER_SPECIFICATION_VERSION, type Reviewer } from '@ux/protocol/core';
import { type ConformanceCheck, check, checkEqual, within } from './conformance-check.js';

export interface ReviewerConformanceOptions {
  /** How long a review may take before it counts as hung. Default 5000 ms. */
  timeoutMs?: number;
}

const REQUEST: ApprovalRequest = {
  call_id: 'conformance-call',
  command: ['/bin/sh', '-c', 'echo conformance'],
  cwd: '/tmp',
  reason: 'conformance check',
  retry: false,
  available_decisions: ['approved', 'denied', 'abort'],
};

/**
 * The behaviours every `Reviewer` must show. Interactive reviewers are tested through a factory that
 * wires them to scripted input.
 */
export function reviewerConformanceChecks(
  createReviewer: () => Reviewer,
  options: ReviewerConformanceOptions = {},
): ConformanceCheck[] {
  const timeoutMs = options.timeoutMs ?? 5_000;
  return [
    {
      name: 'declares ux-reviewer-v1 and an id',
      run: async () => {
        const reviewer = createReviewer();
        checkEqual(reviewer.specificationVersion, REVIEWER_SPECIFICATION_VERSION, 'specificationVersion');
        check(
          typeof reviewer.id === 'string' && /^[a-z][a-z0-9-]*$/.test(reviewer.id),
          `id must be lowercase kebab-case, got ${JSON.stringify(reviewer.id)}`,
        );
      },
    },
    {
      name: 'answers with a well-formed decision among the available ones (or says no one could be asked)',
      run: async () => {
        // `NoReviewerError` is the contract's one allowed failure: nobody could be asked (no terminal,
        // a client without elicitation), which the orchestrator reports as such, not as a "no".
        const answered = await within(
          timeoutMs,
          createReviewer()
            .review(structuredClone(REQUEST), { signal: new AbortController().signal })
            .catch((error: unknown) => {
              if (NoReviewerError.isInstance(error)) return undefined;
              throw error;
            }),
          'a decision',
        );
        if (answered === undefined) return;
        const decision = answered;
        const parsed = reviewDecisionSchema.safeParse(decision);
        check(parsed.success, `malformed decision ${JSON.stringify(decision)}`);
        check(
          REQUEST.available_decisions.includes(decision.type),
          `decision "${decision.type}" is not among ${REQUEST.available_decisions.join(', ')}`,
        );
      },
    },
    {
      name: 'answers abort when the signal is already aborted',
      run: async () => {
        const controller = new AbortController();
        controller.abort();
        const decision = await within(
          timeoutMs,
          createReviewer().review(structuredClone(REQUEST), { signal: controller.signal }),
          'a decision',
        );
        checkEqual(decision, { type: 'abort' }, 'decision under an aborted signal');
      },
    },
  ];
}
