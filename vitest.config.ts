import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';

// One run over every workspace project, so CI gets a single report. UX_TEST_JSON (set by .ci/run)
// adds vitest's JSON reporter for the closing `N passed, N failed` line.
const jsonReport = process.env.UX_TEST_JSON;

// Each workspace package is two projects: `NAME:unit` (pure code: no processes, no sandbox, no
// servers but in-memory ones) and `NAME:integration` (`*.integration.test.ts`: real processes, PTYs,
// bubblewrap, servers on 127.0.0.1). `pnpm test:unit` runs the first kind only; `npm test` runs both.
// Both extend the package's own vitest.config.ts, which stays the one place for its name and timeouts.
const INTEGRATION = '**/*.integration.test.ts';
// Every `*.test.ts` but the integration ones (picomatch extglob: the stem must not end in
// `.integration`).
const NOT_INTEGRATION = '**/!(*.integration).test.ts';

const UNIT_SETUP = resolve('tooling/vitest/unit-setup.ts');

/** Every workspace package directory with a vitest.config.ts, and the project name it gets. */
function packageDirs(): { root: string; name: string }[] {
  const dirs: { root: string; name: string }[] = [];
  for (const group of ['packages', 'apps', 'tooling', 'examples']) {
    for (const entry of readdirSync(group, { withFileTypes: true })) {
      if (entry.isDirectory()) dirs.push({ root: join(group, entry.name), name: entry.name });
    }
  }
  // The suites that compose several packages (`@ux/e2e`, private).
  dirs.push({ root: 'e2e', name: 'e2e' });
  return dirs.filter(({ root }) => existsSync(join(root, 'vitest.config.ts')));
}

function workspaceProjects(): TestProjectInlineConfiguration[] {
  return packageDirs().flatMap(({ root, name }) => {
    const config = join(root, 'vitest.config.ts');
    return [
      {
        extends: `./${config}`,
        test: {
          root,
          name: `${name}:unit`,
          exclude: [INTEGRATION],
          setupFiles: [UNIT_SETUP],
          // Pure code: files share a worker's module cache instead of importing everything anew
          // (a process per file made the unit run four times slower). Native state is shared too:
          // koffi's type registry is process-wide, so one test file declares the Win32 types.
          pool: 'threads',
          isolate: false,
        },
      },
      {
        extends: `./${config}`,
        test: { root, name: `${name}:integration`, exclude: [NOT_INTEGRATION] },
      },
    ];
  });
}

export default defineConfig({
  test: {
    projects: workspaceProjects(),
    reporters: jsonReport ? ['default', ['json', { outputFile: jsonReport }]] : ['default'],
  },
});
