import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'e2e',
    include: ['test/**/*.test.ts'],
    // Real sandboxes, servers and doors on a loaded 2-core machine: seconds per test. A hang still
    // fails, just later.
    testTimeout: 30_000,
  },
});
