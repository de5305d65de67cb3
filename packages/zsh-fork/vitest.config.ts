import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'zsh-fork',
    include: ['src/**/*.test.ts'],
  },
});
