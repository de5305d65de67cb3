import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'protocol-utils',
    include: ['src/**/*.test.ts'],
  },
});
