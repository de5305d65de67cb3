import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'example-reviewer',
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
