import { ControlError, type ControlErrorCode } from './control-error.js';

/** The protocol's version: every message carries it as `v`; a peer speaking another is refused. */
export const CONTROL_PROTOCOL_VERSION = 1;
/** The longest line either side accepts (a session's output is sent in chunks well below it). */
export const CONTROL_MAX_LINE_BYTES = 1024 * 1024;

export type ControlRequest = { v: 1; id: number; method: string; params: unknown };
export type ControlAnswer =
  | { v: 1; id: number; result: unknown }
  | { v: 1; id: number; error: { code: ControlErrorCode; message: string } };
export type ControlEvent = { v: 1; event: string; params: unknown };

const NAME = /^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$/;
const CODES: readonly ControlErrorCode[] = [
  'bad_request',
  'unknown_method',
  'not_found',
  'failed',
  'unavailable',
];

/** One line of a client, checked: a request, or a `ControlError('bad_request')` saying what is wrong. */
export function parseControlRequest(line: string): ControlRequest {
  const value = parseObject(line);
  if (value.v !== CONTROL_PROTOCOL_VERSION)
    throw new ControlError(
      'bad_request',
      `unsupported protocol version ${JSON.stringify(value.v)}; this ux speaks ${CONTROL_PROTOCOL_VERSION}`,
    );
  if (!Number.isSafeInteger(value.id) || (value.id as number) < 0)
    throw new ControlError('bad_request', '"id" must be a non-negative integer');
  if (typeof value.method !== 'string' || !NAME.test(value.method))
    throw new ControlError(
      'bad_request',
      `"method" must be a name like "sessions.list", got ${JSON.stringify(value.method)}`,
    );
  return { v: 1, id: value.id as number, method: value.method, params: value.params ?? {} };
}

/** One line of a server, checked: an answer or an event. */
export function parseControlServerLine(line: string): ControlAnswer | ControlEvent {
  const value = parseObject(line);
  if (value.v !== CONTROL_PROTOCOL_VERSION)
    throw new ControlError('bad_request', `unsupported protocol version ${JSON.stringify(value.v)}`);
  if (typeof value.event === 'string' && NAME.test(value.event))
    return { v: 1, event: value.event, params: value.params ?? {} };
  if (!Number.isSafeInteger(value.id)) throw new ControlError('bad_request', 'an answer without an "id"');
  const id = value.id as number;
  if ('result' in value) return { v: 1, id, result: value.result };
  const error = value.error as { code?: unknown; message?: unknown } | undefined;
  if (
    typeof error === 'object' &&
    error !== null &&
    CODES.includes(error.code as ControlErrorCode) &&
    typeof error.message === 'string'
  )
    return { v: 1, id, error: { code: error.code as ControlErrorCode, message: error.message } };
  throw new ControlError('bad_request', 'an answer with neither "result" nor a well-formed "error"');
}

export function encodeControlMessage(message: ControlRequest | ControlAnswer | ControlEvent): string {
  return `${JSON.stringify(message)}\n`;
}

function parseObject(line: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw new ControlError('bad_request', `not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new ControlError('bad_request', 'a message must be a JSON object');
  return value as Record<string, unknown>;
}
