import { markError, UxError } from '@ux/protocol/core';

/** One named behaviour a plugin must show. `run` throws a `ConformanceFailure` (or any error) when it does not. */
export interface ConformanceCheck {
  name: string;
  run: () => Promise<void>;
  /** Set when the check cannot run here; the reason is reported instead of a pass. */
  skip?: string;
}

const CONFORMANCE_FAILED = 'ux.error.conformance-failed';
const CONFORMANCE_SKIPPED = 'ux.error.conformance-skipped';

/** A plugin did not show a behaviour its interface requires; the message says which and how. */
export class ConformanceFailure extends UxError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('conformance_failed', message, options);
    this.name = 'ConformanceFailure';
    markError(this, CONFORMANCE_FAILED);
  }
  static override isInstance(error: unknown): error is ConformanceFailure {
    return UxError.hasMarker(error, CONFORMANCE_FAILED);
  }
}

/** Thrown by a check that finds, while running, that it cannot run here; reported as skipped with the reason. */
export class ConformanceSkip extends UxError {
  constructor(readonly reason: string) {
    super('conformance_skipped', `skipped: ${reason}`);
    this.name = 'ConformanceSkip';
    markError(this, CONFORMANCE_SKIPPED);
  }
  static override isInstance(error: unknown): error is ConformanceSkip {
    return UxError.hasMarker(error, CONFORMANCE_SKIPPED);
  }
  override toJSON() {
    return { ...super.toJSON(), reason: this.reason };
  }
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new ConformanceFailure(message);
}

export function checkEqual<T>(actual: T, expected: T, what: string): void {
  if (JSON.stringify(actual) !== JSON.stringify(expected)) {
    throw new ConformanceFailure(
      `${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`,
    );
  }
}

/** Awaits `promise` for at most `ms`, failing with a message that says what was awaited. */
export async function within<T>(ms: number, promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new ConformanceFailure(`timed out after ${ms} ms waiting for ${what}`)),
      ms,
    );
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Awaits a promise that must reject, returning the rejection. */
export async function rejection(promise: Promise<unknown>, what: string): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new ConformanceFailure(`${what} should have failed but succeeded`);
}

export interface ConformanceOutcome {
  name: string;
  status: 'passed' | 'failed' | 'skipped';
  error?: unknown;
  reason?: string;
}

/** Runs checks one after another (they may start processes) and reports each outcome. */
export async function runConformanceChecks(
  checks: readonly ConformanceCheck[],
): Promise<ConformanceOutcome[]> {
  const outcomes: ConformanceOutcome[] = [];
  for (const item of checks) {
    if (item.skip) {
      outcomes.push({ name: item.name, status: 'skipped', reason: item.skip });
      continue;
    }
    try {
      await item.run();
      outcomes.push({ name: item.name, status: 'passed' });
    } catch (error) {
      if (ConformanceSkip.isInstance(error))
        outcomes.push({ name: item.name, status: 'skipped', reason: error.reason });
      else outcomes.push({ name: item.name, status: 'failed', error });
    }
  }
  return outcomes;
}
