import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'exec-server',
    include: ['src/**/*.test.ts'],
    // Integration tests start a server process and processes under it; on a loaded 2-core machine that
    // can take seconds. A hang still fails, just later.
    testTimeout: 20_000,
  },
});
