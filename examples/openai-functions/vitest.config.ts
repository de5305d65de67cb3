import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'example-openai-functions',
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
