import { defineConfig } from 'tsup';

// Only the test server is built (suites start it with `node`); the suites in test/ are not.
export default defineConfig({
  entry: { 'exec-server-bin': 'src/exec-server-bin.ts' },
  format: ['esm'],
  target: 'node20',
  sourcemap: true,
  clean: true,
  // Loaded from the workspace packages, as an embedder would, not bundled.
  external: [/^@ux\//],
});
