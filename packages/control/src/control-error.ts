import { markError, UxError } from '@ux/protocol/core';

/** What went wrong, on the wire: the request was malformed, named nothing served, or failed. */
export type ControlErrorCode = 'bad_request' | 'unknown_method' | 'not_found' | 'failed' | 'unavailable';

const MARKER = 'ux.error.control';

/**
 * A control request that could not be served: thrown by a method handler (sent to the client as
 * `{error: {code, message}}`) and by the client when the answer is an error or the process is gone.
 */
export class ControlError extends UxError {
  readonly controlCode: ControlErrorCode;
  constructor(controlCode: ControlErrorCode, message: string, options?: { cause?: unknown }) {
    super('control_error', message, options);
    this.name = 'ControlError';
    this.controlCode = controlCode;
    markError(this, MARKER);
  }
  static override isInstance(error: unknown): error is ControlError {
    return UxError.hasMarker(error, MARKER);
  }
  override toJSON() {
    return { ...super.toJSON(), controlCode: this.controlCode };
  }
}
