import { describeWireIssues, InvalidArgumentsError, WireErrorCode } from '@ux/protocol';

/** A failure answered to the client as a JSON-RPC error with this code and message. */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'RpcError';
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
