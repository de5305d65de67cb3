import { accessSync, constants } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SpawnFailedError } from '@ux/protocol';

/** Where the build puts the helper: `native/build/`, one level above both `src/` and `dist/`. */
export function defaultHelperPath(): string {
  return fileURLToPath(new URL('../native/build/ux-spawn-helper', import.meta.url));
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
