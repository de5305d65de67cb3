import { describeWireIssues, InvalidArgumentsError, markError, UxError, WireErrorCode } from '@ux/protocol';

const RPC_ERROR = 'ux.error.exec-server-rpc';

/**
 * A request the server could not serve, answered to the client as a JSON-RPC error with `wireCode`
 * and the message. The client sees it as `ExecServerRequestError`, with the same code.
 */
export class RpcError extends UxError {
  constructor(
    /** The JSON-RPC error code (`WireErrorCode`): -32602 invalid params, -32004 not found, … */
    readonly wireCode: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super('exec_server_request_failed', message, options);
    this.name = 'RpcError';
    markError(this, RPC_ERROR);
  }
  static override isInstance(error: unknown): error is RpcError {
    return UxError.hasMarker(error, RPC_ERROR);
  }
  override toJSON() {
    return { ...super.toJSON(), wireCode: this.wireCode };
  }
}

export const invalidRequest = (message: string) => new RpcError(WireErrorCode.InvalidRequest, message);
export const invalidParams = (message: string) => new RpcError(WireErrorCode.InvalidParams, message);
export const internalError = (message: string) => new RpcError(WireErrorCode.InternalError, message);
export const notFound = (message: string) => new RpcError(WireErrorCode.NotFound, message);

/**
 * Runs a wire decoder of `@ux/protocol` (`pathFromFileUri`, `decodeSandboxContext`): a value it cannot
 * read is answered -32602 with the decoder's own words (they name the field).
 */
export function decodeParams<T>(decode: () => T): T {
  try {
    return decode();
  } catch (error) {
    if (InvalidArgumentsError.isInstance(error)) throw invalidParams(describeWireIssues(error));
    throw error;
  }
}
