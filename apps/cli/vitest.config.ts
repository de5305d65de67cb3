import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'cli',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // These tests start the built `ux`, often in a terminal with a sandbox: seconds, not milliseconds.
    testTimeout: 30_000,
  },
});
