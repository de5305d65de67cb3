/**
 * The JSON lines between Node and `ux-escalate-broker` (one object per line, both ways). Strings carry
 * bytes that are not UTF-8 as lone surrogates U+DC80–U+DCFF; JSON.stringify writes them as `\udcXX`,
 * which the broker decodes back to the byte.
 */

/** Node → broker. */
export type BrokerOp =
  | { op: 'open'; session: string; token: string }
  | { op: 'close'; session: string }
  | { op: 'reply'; request: number; action: 'run' }
  | { op: 'reply'; request: number; action: 'deny'; reason: string }
  | {
      op: 'reply';
      request: number;
      action: 'escalate';
      argv: string[];
      cwd: string;
      env: Record<string, string>;
    };

/** Broker → Node. */
export type BrokerEvent =
  | { type: 'ready'; pid: number }
  | { type: 'opened'; session: string }
  | { type: 'connected'; session: string }
  | { type: 'refused'; reason: string }
  | {
      type: 'exec';
      session: string;
      request: number;
      file: string;
      argv: string[];
      workdir: string;
      env: Record<string, string>;
    }
  | { type: 'cancelled'; request: number }
  | { type: 'started'; request: number; pid: number }
  | { type: 'exited'; request: number; code: number; signal: number | null }
  | { type: 'closed'; session: string }
  | { type: 'error'; message: string };

/** Parses one line from the broker; `undefined` for anything that is not a known event. */
export function parseBrokerEvent(line: string): BrokerEvent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const event = value as { type?: unknown };
  return typeof event.type === 'string' ? (value as BrokerEvent) : undefined;
}
