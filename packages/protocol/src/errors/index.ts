// `@ux/protocol/errors`: the error classes alone, for code that must start fast (a CLI's error
// handler) without evaluating every schema of the protocol.
export * from './errors.js';
export { markError, UxError, type UxErrorCode } from './ux-error.js';
