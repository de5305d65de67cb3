import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'sandbox-landlock',
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
