import { markError, UxError } from '@ux/protocol/core';

const EXEC_SERVER_UNREACHABLE = 'ux.error.exec-server-unreachable';

/** Which step of reaching an exec-server failed. */
export type ExecServerConnectionStage = 'connect' | 'handshake' | 'resume';

/**
 * An exec-server could not be reached, did not complete the handshake, or a lost connection could
 * not be resumed. A request the server answered with an error is `ExecServerRequestError` instead.
 */
export class ExecServerConnectionError extends UxError {
  readonly stage: ExecServerConnectionStage;

  constructor(stage: ExecServerConnectionStage, message: string, options?: { cause?: unknown }) {
    super('exec_server_unreachable', message, options);
    this.name = 'ExecServerConnectionError';
    this.stage = stage;
    markError(this, EXEC_SERVER_UNREACHABLE);
  }

  static override isInstance(error: unknown): error is ExecServerConnectionError {
    return UxError.hasMarker(error, EXEC_SERVER_UNREACHABLE);
  }

  override toJSON() {
    return { ...super.toJSON(), stage: this.stage };
  }
}
