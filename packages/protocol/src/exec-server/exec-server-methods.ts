import type * as z from 'zod/v4';
import {
  fsCanonicalizeParamsSchema,
  fsCanonicalizeResultSchema,
  fsCreateDirectoryParamsSchema,
  fsGetMetadataParamsSchema,
  fsGetMetadataResultSchema,
  fsReadDirectoryParamsSchema,
  fsReadDirectoryResultSchema,
  fsReadFileParamsSchema,
  fsReadFileResultSchema,
  fsRemoveParamsSchema,
  fsWriteFileParamsSchema,
} from './fs-methods.js';
import {
  environmentInfoSchema,
  environmentStatusResultSchema,
  initializeParamsSchema,
  initializeResultSchema,
} from './handshake.js';
import {
  closedNotificationSchema,
  execParamsSchema,
  exitedNotificationSchema,
  outputNotificationSchema,
  readParamsSchema,
  readResultSchema,
  resizeParamsSchema,
  signalParamsSchema,
  startResultSchema,
  terminateParamsSchema,
  terminateResultSchema,
  writeParamsSchema,
  writeResultSchema,
} from './process-methods.js';

interface MethodSchemas {
  params: z.ZodType | null;
  result: z.ZodType | null;
}

/** Client → server methods with their param and result schemas (`null`: no params or an empty object). */
export const execServerMethods = {
  initialize: { params: initializeParamsSchema, result: initializeResultSchema },
  'environment/info': { params: null, result: environmentInfoSchema },
  'environment/status': { params: null, result: environmentStatusResultSchema },
  'process/start': { params: execParamsSchema, result: startResultSchema },
  'process/read': { params: readParamsSchema, result: readResultSchema },
  'process/write': { params: writeParamsSchema, result: writeResultSchema },
  'process/signal': { params: signalParamsSchema, result: null },
  'process/terminate': { params: terminateParamsSchema, result: terminateResultSchema },
  /** ux extension; see `UX_EXEC_SERVER_CAPABILITIES.processResize`. */
  'process/resize': { params: resizeParamsSchema, result: null },
  'fs/readFile': { params: fsReadFileParamsSchema, result: fsReadFileResultSchema },
  'fs/writeFile': { params: fsWriteFileParamsSchema, result: null },
  'fs/getMetadata': { params: fsGetMetadataParamsSchema, result: fsGetMetadataResultSchema },
  'fs/readDirectory': { params: fsReadDirectoryParamsSchema, result: fsReadDirectoryResultSchema },
  'fs/canonicalize': { params: fsCanonicalizeParamsSchema, result: fsCanonicalizeResultSchema },
  'fs/createDirectory': { params: fsCreateDirectoryParamsSchema, result: null },
  'fs/remove': { params: fsRemoveParamsSchema, result: null },
} as const satisfies Record<string, MethodSchemas>;
export type ExecServerMethod = keyof typeof execServerMethods;

/** Server → client notifications. */
export const execServerNotifications = {
  'process/output': outputNotificationSchema,
  'process/exited': exitedNotificationSchema,
  'process/closed': closedNotificationSchema,
} as const;
export type ExecServerNotification = keyof typeof execServerNotifications;

/** The one notification a client sends; any other makes a Codex server drop the connection. */
export const INITIALIZED_NOTIFICATION = 'initialized';
