/**
 * The JSON lines between Node and `ux-escalate-broker` (one object per line, both ways). Strings carry
 * bytes that are not UTF-8 as lone surrogates U+DC80–U+DCFF; JSON.stringify writes them as `\udcXX`,
 * which the broker decodes back to the byte.
 */

/** Node → broker. */
export type BrokerOp =
  | { op: 'open'; session: string; token: string }
  | { op: 'close'; session: string }
  /** `cache`: the same exec again in this session is answered Run by the broker itself. */
  | { op: 'reply'; request: number; action: 'run'; cache?: true }
  /** The rules changed: every session's Run cache is emptied (answered by `flushed`). */
  | { op: 'flush' }
  | { op: 'reply'; request: number; action: 'deny'; reason: string }
  | {
      op: 'reply';
      request: number;
      action: 'escalate';
      argv: string[];
      cwd: string;
      env: Record<string, string>;
      /** What the decision checked at `cwd`: the broker runs the program there only if it still is. */
      cwdIdentity?: WireDirectoryIdentity;
    };

/**
 * A directory's identity as the broker compares it: `st_dev` and `st_ino` as decimal strings (64-bit
 * values do not fit a JSON number), then the same for each directory above it, the parent first, up
 * to `/` (empty for `/` itself).
 */
export interface WireDirectoryIdentity {
  dev: string;
  ino: string;
  ancestors: { dev: string; ino: string }[];
}

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
  /**
   * The escalated child ended, or never started (`code` 126 or 127). `cwdChanged`: not started because
   * the working directory, or one above it, was no longer the one `cwdIdentity` named.
   */
  | { type: 'exited'; request: number; code: number; signal: number | null; cwdChanged?: true }
  /** `cachedRuns`: how many of the session's execs the broker answered Run from its cache. */
  | { type: 'closed'; session: string; cachedRuns?: number }
  | { type: 'flushed' }
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
