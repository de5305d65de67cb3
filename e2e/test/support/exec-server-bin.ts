import { fileURLToPath } from 'node:url';

/**
 * The built test server (`src/exec-server-bin.ts`: `runExecServer` with the bwrap backend), started by
 * the suites with `node SERVER_BIN --listen …`. `pnpm --filter @ux/e2e build` makes it.
 */
export const SERVER_BIN = fileURLToPath(new URL('../../dist/exec-server-bin.js', import.meta.url));
