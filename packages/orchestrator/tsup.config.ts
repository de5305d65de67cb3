import { defineConfig } from 'tsup';

export default defineConfig({
  // `./sandbox-selector` alone, for hosts that only pick a sandbox (`ux sandbox`): it loads no schema,
  // no rules parser and no grammar.
  entry: { index: 'src/index.ts', 'sandbox-selector': 'src/sandbox/sandbox-selector.ts' },
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
});
