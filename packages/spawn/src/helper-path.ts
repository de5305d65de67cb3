import { accessSync, constants } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { SpawnFailedError } from '@ux/protocol';

/**
 * Where the build puts the helper: `native/build/` in this package. Found through the package's
 * name, not this file's location, so that it holds when an application bundles this code (the ux
 * CLI does); the package resolves itself by name from its own files.
 */
export function defaultHelperPath(): string {
  const packageJson = createRequire(import.meta.url).resolve('@ux/spawn/package.json');
  return join(dirname(packageJson), 'native', 'build', 'ux-spawn-helper');
}

/** The helper's path, or a clear error saying how to build it. */
export function checkedHelperPath(path: string, command: readonly string[]): string {
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    throw new SpawnFailedError({
      command,
      path,
      reason:
        'ux-spawn-helper is not built; it starts PTYs and keeps host descriptors out of children. Run `pnpm --filter @ux/spawn build` (needs a C compiler)',
    });
  }
}

/** Arguments that run `program` through the helper: `<helper> <host-pid> -- <program> <argv0> [args…]`. */
export function helperArgs(options: {
  hostPid: number;
  program: string;
  argv0: string;
  args: readonly string[];
}): string[] {
  return [String(options.hostPid), '--', options.program, options.argv0, ...options.args];
}
