import { defineConfig } from 'tsup';

export default defineConfig({
  // The launcher is a second entry: a Windows plan's argv runs `node dist/windows-token-launcher.js`.
  entry: ['src/index.ts', 'src/sandbox-plugin.ts', 'src/windows-token-launcher.ts'],
  format: ['esm'],
  target: 'node20',
  dts: { entry: ['src/index.ts', 'src/sandbox-plugin.ts'] },
  sourcemap: true,
  clean: true,
});
