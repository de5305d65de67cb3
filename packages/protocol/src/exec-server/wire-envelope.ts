import * as z from 'zod/v4';

/**
 * The exec-server speaks a JSON-RPC-like dialect: one JSON object per line, no `"jsonrpc"` field on
 * output (it is accepted and ignored on input), integer or string ids, no batches.
 */
export const requestIdSchema = z.union([z.number().int(), z.string()]);
export type RequestId = z.output<typeof requestIdSchema>;

const traceSchema = z
  .object({ traceparent: z.string().optional(), tracestate: z.string().optional() })
  .optional();

export const wireRequestSchema = z.object({
  id: requestIdSchema,
  method: z.string().min(1),
  params: z.unknown().optional(),
  trace: traceSchema,
});
export type WireRequest = z.output<typeof wireRequestSchema>;

export const wireNotificationSchema = z.object({
  method: z.string().min(1),
  params: z.unknown().optional(),
  trace: traceSchema,
});
export type WireNotification = z.output<typeof wireNotificationSchema>;

export const wireErrorObjectSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
export type WireErrorObject = z.output<typeof wireErrorObjectSchema>;

export const wireResponseSchema = z.object({ id: requestIdSchema, result: z.unknown() });
export type WireResponse = z.output<typeof wireResponseSchema>;

export const wireErrorResponseSchema = z.object({ id: requestIdSchema, error: wireErrorObjectSchema });
export type WireErrorResponse = z.output<typeof wireErrorResponseSchema>;

export type WireMessage =
  | { kind: 'request'; message: WireRequest }
  | { kind: 'notification'; message: WireNotification }
  | { kind: 'response'; message: WireResponse }
  | { kind: 'error'; message: WireErrorResponse }
  | { kind: 'invalid'; reason: string };

/**
 * Classifies one line of the wire. Anything that is not a single well-formed message comes back as
 * `invalid` with a reason, never as an exception.
 */
export function parseWireMessage(line: string): WireMessage {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { kind: 'invalid', reason: `not JSON: ${(error as Error).message}` };
  }
  if (Array.isArray(value)) return { kind: 'invalid', reason: 'batches are not supported' };
  if (typeof value !== 'object' || value === null)
    return { kind: 'invalid', reason: 'a message must be a JSON object' };
  const record = value as Record<string, unknown>;
  if ('id' in record && !requestIdSchema.safeParse(record.id).success) {
    return { kind: 'invalid', reason: `id must be an integer or a string, got ${JSON.stringify(record.id)}` };
  }
  if ('method' in record) {
    const parsed =
      'id' in record ? wireRequestSchema.safeParse(record) : wireNotificationSchema.safeParse(record);
    if (!parsed.success)
      return { kind: 'invalid', reason: `malformed ${'id' in record ? 'request' : 'notification'}` };
    return 'id' in record
      ? { kind: 'request', message: parsed.data as WireRequest }
      : { kind: 'notification', message: parsed.data as WireNotification };
  }
  if ('error' in record) {
    const parsed = wireErrorResponseSchema.safeParse(record);
    return parsed.success
      ? { kind: 'error', message: parsed.data }
      : { kind: 'invalid', reason: 'malformed error response' };
  }
  if ('result' in record) {
    const parsed = wireResponseSchema.safeParse(record);
    return parsed.success
      ? { kind: 'response', message: parsed.data }
      : { kind: 'invalid', reason: 'malformed response' };
  }
  return { kind: 'invalid', reason: 'a message needs a method, a result or an error' };
}
