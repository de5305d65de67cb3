import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'apply-patch',
    include: ['src/**/*.test.ts'],
  },
});
