import { NoReviewerError, REVIEWER_SPECIFICATION_VERSION, type Reviewer } from '@ux/protocol/core';

/**
 * The reviewer of a session that was given none: every question it gets is refused at once as
 * `unattended` (nobody could be asked), never left waiting. A host whose policy never asks
 * (`approvalPolicy: 'never'`) needs no reviewer; one whose policy asks learns from the refusal's
 * reason how to give one.
 */
export function absentReviewer(): Reviewer {
  return {
    specificationVersion: REVIEWER_SPECIFICATION_VERSION,
    id: 'none',
    review: async () => {
      throw new NoReviewerError(
        'this session was started without a reviewer; give one (the `reviewer` setting), or use approval policy "never"',
      );
    },
  };
}
