import { describe, it } from 'vitest';
import { type ConformanceCheck, ConformanceSkip } from './conformance-check.js';

/**
 * Registers checks as vitest tests under one `describe`. A skipped check is reported as skipped with
 * its reason in the name, never as a pass.
 */
export function describeConformance(
  title: string,
  checks: readonly ConformanceCheck[],
  timeoutMs = 20_000,
): void {
  describe(title, () => {
    for (const item of checks) {
      if (item.skip) it.skip(`${item.name} (skipped: ${item.skip})`, () => {});
      else
        it(
          item.name,
          async (context) => {
            try {
              await item.run();
            } catch (error) {
              if (ConformanceSkip.isInstance(error)) context.skip(error.reason);
              else throw error;
            }
          },
          timeoutMs,
        );
    }
  });
}
