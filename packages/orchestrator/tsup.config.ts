import { defineConfig } from 'tsup';

export default defineConfig({
  entry: {
    index: 'src/index.ts',
    // `./sandbox-selector` alone, for hosts that only pick a sandbox (`ux sandbox`): it loads no schema,
    // no rules parser and no grammar.
    'sandbox-selector': 'src/sandbox/sandbox-selector.ts',
    // `./internal`: the building blocks behind the public API, for ux's own packages and tests.
    internal: 'src/internal.ts',
  },
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
});
