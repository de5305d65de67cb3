import { InvalidArgumentsError, type Reviewer } from '@ux/protocol/core';

/** Settings that contradict each other are the host's mistake: refused when the orchestrator is created. */
export function checkOrchestratorSettings(settings: {
  strictAutoReview?: boolean;
  autoReviewer?: Reviewer;
}): void {
  if (settings.strictAutoReview && settings.autoReviewer === undefined)
    throw new InvalidArgumentsError({
      tool: 'orchestrator',
      issues: [
        {
          path: 'strictAutoReview',
          message:
            'is true but no autoReviewer is set: strict automatic review sends every approval to the automatic reviewer; pass autoReviewer, or leave strictAutoReview false',
        },
      ],
    });
}
