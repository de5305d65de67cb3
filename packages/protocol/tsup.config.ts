import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    core: 'src/core.ts',
    'errors/index': 'src/errors/index.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
  // zod stays a dependency, not inlined: hosts that use zod themselves share one copy (and one set of
  // schema classes). The CLI bundles its own dependencies, so its start-up does not depend on this.
  external: ['zod'],
});
