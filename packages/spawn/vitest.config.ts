import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'spawn',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
});
