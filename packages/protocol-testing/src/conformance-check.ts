/** One named behaviour a plugin must show. `run` throws a `ConformanceFailure` (or any error) when it does not. */
export interface ConformanceCheck {
  name: string;
  run: () => Promise<void>;
  /** Set when the check cannot run here; the reason is reported instead of a pass. */
  skip?: string;
}

export class ConformanceFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConformanceFailure';
  }
}

/** Thrown by a check that finds, while running, that it cannot run here; reported as skipped with the reason. */
export class ConformanceSkip extends Error {
  constructor(readonly reason: string) {
    super(`skipped: ${reason}`);
    this.name = 'ConformanceSkip';
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
      if (error instanceof ConformanceSkip)
        outcomes.push({ name: item.name, status: 'skipped', reason: error.reason });
      else outcomes.push({ name: item.name, status: 'failed', error });
    }
  }
  return outcomes;
}
