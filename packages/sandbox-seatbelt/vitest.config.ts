import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'sandbox-seatbelt',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
});
