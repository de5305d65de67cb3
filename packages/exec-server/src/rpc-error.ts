import { WireErrorCode } from '@ux/protocol';

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
