import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'example-vercel-ai',
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
  },
});
