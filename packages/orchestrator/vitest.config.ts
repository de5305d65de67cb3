import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    name: 'orchestrator',
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // `pnpm coverage` in this package: branch coverage of the gate module (the attempt loop and its
    // retry gates) must stay at 100%. The root run ignores these options.
    coverage: {
      provider: 'v8',
      include: ['src/orchestrator/attempt-loop.ts'],
      reporter: ['text'],
      thresholds: { branches: 100, functions: 100, lines: 100, statements: 100 },
    },
  },
});
