import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'network-proxy',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
});
