import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    core: 'src/core.ts',
    'errors/index': 'src/errors/index.ts',
    'testing/index': 'src/testing/index.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
  external: ['vitest'],
  // zod is ~100 small modules; inlined, it loads in half the time, and every ux command starts with it.
  noExternal: ['zod'],
});
