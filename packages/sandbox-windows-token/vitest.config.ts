import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'sandbox-windows-token',
    include: ['src/**/*.test.ts'],
  },
});
