import * as z from 'zod/v4';
import { isBase64 } from './base64.js';
import { missingField } from './missing-field.js';
import { sandboxContextSchema } from './sandbox-context.js';

const base64 = z.string().refine(isBase64, { message: 'invalid base64' });
const requiredProcessId = z.string({ error: missingField('processId') });

/** Build the child environment from the server's own, then overlay `env`. */
export const envPolicySchema = z.object({
  inherit: z.enum(['all', 'core', 'none']),
  ignoreDefaultExcludes: z.boolean(),
  exclude: z.array(z.string()),
  set: z.record(z.string(), z.string()),
  includeOnly: z.array(z.string()),
});
export type EnvPolicy = z.output<typeof envPolicySchema>;

/** `process/start` params: a client-chosen id, a `file://` cwd, and a required env and tty. */
export const execParamsSchema = z.object({
  processId: z.string({ error: missingField('processId') }).min(1, 'processId must not be empty'),
  argv: z.array(z.string(), { error: missingField('argv') }).min(1, 'argv must not be empty'),
  cwd: z.string({ error: missingField('cwd') }),
  env: z.record(z.string(), z.string(), { error: missingField('env') }),
  tty: z.boolean({ error: missingField('tty') }),
  pipeStdin: z.boolean().optional(),
  arg0: z.string().nullable().optional(),
  envPolicy: envPolicySchema.nullable().optional(),
  sandbox: sandboxContextSchema.nullable().optional(),
  enforceManagedNetwork: z.boolean().optional(),
  managedNetwork: z
    .object({
      loopbackPorts: z.array(z.number().int()),
      allowLocalBinding: z.boolean(),
      allowUnixSockets: z.array(z.string()).optional(),
      dangerouslyAllowAllUnixSockets: z.boolean().optional(),
    })
    .nullable()
    .optional(),
  networkProxy: z.unknown().optional(),
  metadata: z.object({ threadId: z.string().optional(), toolCallId: z.string().optional() }).optional(),
  /** Run `[shell.path, '-lc', script]` with the login shell's state captured once per scope (`shellSnapshotV2`). */
  shellSnapshot: z
    .object({ scopeId: z.string(), shell: z.object({ name: z.string(), path: z.string() }) })
    .nullable()
    .optional(),
});
export type ExecParams = z.output<typeof execParamsSchema>;

export const startResultSchema = z.object({
  processId: z.string(),
  /** `none`, `macosSeatbelt`, `linuxSeccomp`, `windowsRestrictedToken`, `windowsMxc`; newer values are kept. */
  sandboxType: z.string().optional(),
});
export type StartResult = z.output<typeof startResultSchema>;

export const outputStreamSchema = z.enum(['stdout', 'stderr', 'pty']);
export type OutputStream = z.output<typeof outputStreamSchema>;

export const readParamsSchema = z.object({
  processId: requiredProcessId,
  afterSeq: z.number().int().nonnegative().nullable().optional(),
  /** 0 is allowed (Codex answers it with one chunk: at least one is always returned). */
  maxBytes: z.number().int().nonnegative().nullable().optional(),
  waitMs: z.number().int().nonnegative().nullable().optional(),
});
export type ReadParams = z.output<typeof readParamsSchema>;

export const outputChunkSchema = z.object({
  seq: z.number().int(),
  stream: outputStreamSchema,
  chunk: base64,
});
export type OutputChunk = z.output<typeof outputChunkSchema>;

export const readResultSchema = z.object({
  chunks: z.array(outputChunkSchema),
  nextSeq: z.number().int(),
  exited: z.boolean(),
  exitCode: z.number().int().nullable(),
  closed: z.boolean(),
  failure: z.string().nullable(),
  sandboxDenied: z.boolean().default(false),
});
export type ReadResult = z.output<typeof readResultSchema>;

export const writeParamsSchema = z.object({
  processId: requiredProcessId,
  chunk: z.string({ error: missingField('chunk') }).pipe(base64),
  writeId: z.string({ error: missingField('writeId') }).min(1, 'writeId must not be empty'),
});
export type WriteParams = z.output<typeof writeParamsSchema>;

export const writeStatusSchema = z.enum(['accepted', 'unknownProcess', 'stdinClosed', 'starting']);
export type WriteStatus = z.output<typeof writeStatusSchema>;
export const writeResultSchema = z.object({ status: writeStatusSchema });
export type WriteResult = z.output<typeof writeResultSchema>;

export const signalParamsSchema = z.object({
  processId: requiredProcessId,
  signal: z.literal('interrupt', {
    error: (issue) =>
      issue.input === undefined
        ? 'missing field `signal`'
        : `unknown variant ${JSON.stringify(issue.input)}, expected \`interrupt\``,
  }),
});
export type SignalParams = z.output<typeof signalParamsSchema>;

export const terminateParamsSchema = z.object({ processId: requiredProcessId });
export type TerminateParams = z.output<typeof terminateParamsSchema>;
export const terminateResultSchema = z.object({ running: z.boolean() });
export type TerminateResult = z.output<typeof terminateResultSchema>;

/** Server → client notifications. `seq` is per process, starts at 1 and is shared by all three. */
export const outputNotificationSchema = z.object({
  processId: z.string(),
  seq: z.number().int(),
  stream: outputStreamSchema,
  chunk: base64,
});
export type OutputNotification = z.output<typeof outputNotificationSchema>;

export const exitedNotificationSchema = z.object({
  processId: z.string(),
  seq: z.number().int(),
  exitCode: z.number().int(),
  sandboxDenied: z.boolean().optional(),
});
export type ExitedNotification = z.output<typeof exitedNotificationSchema>;

export const closedNotificationSchema = z.object({ processId: z.string(), seq: z.number().int() });
export type ClosedNotification = z.output<typeof closedNotificationSchema>;

/**
 * ux extension, not in Codex 0.169.0 (which answers `process/resize` with -32601): resize the PTY of a
 * tty process. Offered only by servers that advertise the `uxProcessResize` capability.
 */
export const resizeParamsSchema = z.object({
  processId: requiredProcessId,
  rows: z.number().int().min(1).max(10_000),
  cols: z.number().int().min(1).max(10_000),
});
export type ResizeParams = z.output<typeof resizeParamsSchema>;
