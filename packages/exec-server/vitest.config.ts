import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'exec-server',
    include: ['src/**/*.test.ts'],
  },
});
