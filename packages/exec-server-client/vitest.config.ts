import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'exec-server-client',
    include: ['src/**/*.test.ts'],
  },
});
