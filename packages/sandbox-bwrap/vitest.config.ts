import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'sandbox-bwrap',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
