import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', 'testing/exec-server-bin': 'src/testing/exec-server-bin.ts' },
  format: ['esm'],
  target: 'node20',
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  // The test bin's sandbox backend is a devDependency: load it, do not bundle it.
  external: ['@ux/sandbox-bwrap'],
});
