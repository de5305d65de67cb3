// Setup file of every `NAME:unit` project (see the root vitest.config.ts): a unit test that starts a
// process fails at once with the reason, so `pnpm test:unit` stays fast and machine-independent.
// Tests that need processes, PTYs, sandboxes or servers other than in-memory ones are named
// `*.integration.test.ts`.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';

const names = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
for (const name of names) {
  Object.defineProperty(childProcess, name, {
    configurable: true,
    writable: true,
    value: () => {
      throw new Error(
        `unit tests do not start processes (child_process.${name}); name the file *.integration.test.ts`,
      );
    },
  });
}
// Named imports (`import { spawn } from 'node:child_process'`) see the replacements too.
syncBuiltinESMExports();
