import { defineConfig } from 'tsup';

export default defineConfig({
  // `./session-policy` alone, for hosts that only turn settings into a policy (it loads no door).
  entry: { index: 'src/index.ts', 'session-policy': 'src/session-policy.ts' },
  format: ['esm'],
  target: 'node20',
  dts: true,
  sourcemap: true,
  clean: true,
});
