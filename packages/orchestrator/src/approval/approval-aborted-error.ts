import { markError, RejectedError, UxError } from '@ux/protocol/core';

const APPROVAL_ABORTED = 'ux.error.approval-aborted';

/**
 * The reviewer answered `abort`: the command is refused ("aborted by the user") and the whole turn is
 * to be interrupted, as after an interrupt from the user. It is a `RejectedError`, so code that only
 * knows rejections still handles it.
 */
export class ApprovalAbortedError extends RejectedError {
  /** Always true: stop the turn, not just this command. */
  readonly interruptTurn = true;

  constructor(options?: { cause?: unknown }) {
    super({ reason: 'aborted by the user', source: 'user' }, options);
    this.name = 'ApprovalAbortedError';
    markError(this, APPROVAL_ABORTED);
  }

  static override isInstance(error: unknown): error is ApprovalAbortedError {
    return (
      UxError.isInstance(error) &&
      (error as unknown as Record<symbol, unknown>)[Symbol.for(APPROVAL_ABORTED)] === true
    );
  }

  override toJSON() {
    return { ...super.toJSON(), interruptTurn: this.interruptTurn };
  }
}
