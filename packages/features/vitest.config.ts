import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'features',
    include: ['src/**/*.test.ts'],
  },
});
