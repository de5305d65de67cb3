import { defineConfig } from 'vitest/config';

// One run over every workspace project, so CI gets a single report. UX_TEST_JSON (set by .ci/run)
// adds vitest's JSON reporter for the closing `N passed, N failed` line.
const jsonReport = process.env.UX_TEST_JSON;

export default defineConfig({
  test: {
    projects: ['packages/*', 'apps/*', 'tooling/*'],
    reporters: jsonReport ? ['default', ['json', { outputFile: jsonReport }]] : ['default'],
  },
});
