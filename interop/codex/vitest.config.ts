import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Interoperability with the real Codex (its exec-server, and `codex exec` driving `ux mcp`), kept out of
// the default `npm test`: it needs @openai/codex (about 400 MB) installed here with `npm ci`. Run with `npm test --prefix interop/codex`.
const jsonReport = process.env.UX_TEST_JSON;

export default defineConfig({
  test: {
    name: 'interop-codex',
    root: fileURLToPath(new URL('.', import.meta.url)),
    include: ['*.test.ts'],
    testTimeout: 30_000,
    reporters: jsonReport ? ['default', ['json', { outputFile: jsonReport }]] : ['default'],
  },
});
