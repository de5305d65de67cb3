// The whole contract: `./core.js` (no schema library) and the zod schemas built on it.
export * from './core.js';
export { execServerNotifications, INITIALIZED_NOTIFICATION } from './exec-server/exec-server-methods.js';
export {
  fsCanonicalizeParamsSchema,
  fsCreateDirectoryParamsSchema,
  fsGetMetadataParamsSchema,
  fsReadDirectoryParamsSchema,
  fsReadFileParamsSchema,
  fsRemoveParamsSchema,
  fsWriteFileParamsSchema,
} from './exec-server/fs-methods.js';
export {
  environmentInfoSchema,
  initializeParamsSchema,
  initializeResultSchema,
} from './exec-server/handshake.js';
export {
  envPolicySchema,
  execParamsSchema,
  readParamsSchema,
  readResultSchema,
  resizeParamsSchema,
  signalParamsSchema,
  startResultSchema,
  terminateParamsSchema,
  writeParamsSchema,
  writeResultSchema,
} from './exec-server/process-methods.js';
export { sandboxContextSchema } from './exec-server/sandbox-context.js';
export { parseWireMessage } from './exec-server/wire-envelope.js';
export { reviewDecisionSchema } from './review/review-decision.js';
export { execResultSchema } from './tools/exec-result.js';
export {
  parseExecCommandArgs,
  parseShellCommandArgs,
  parseWriteStdinArgs,
} from './tools/parse-tool-arguments.js';
