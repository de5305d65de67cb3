import { accessSync, constants, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SpawnFailedError } from '@ux/protocol/core';
import type { SpawnEscalation } from './spawn-escalation.js';

/** Where the build puts the helper: `native/build/` in this package. */
export function defaultHelperPath(): string {
  return join(spawnPackageDir(), 'native', 'build', 'ux-spawn-helper');
}

/**
 * This package's directory: one level above this module in its own build and sources; when an
 * application bundles this code (the ux CLI does), the `node_modules/@ux/spawn` nearest above the
 * bundle. A few file reads, where `require.resolve` costs milliseconds of a CLI's start-up; the
 * resolver remains the answer for any other layout.
 */
function spawnPackageDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  if (isSpawnPackage(dirname(here))) return dirname(here);
  for (let dir = here; dirname(dir) !== dir; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', '@ux', 'spawn');
    if (isSpawnPackage(candidate)) return candidate;
  }
  return dirname(createRequire(import.meta.url).resolve('@ux/spawn/package.json'));
}

function isSpawnPackage(dir: string): boolean {
  try {
    return (
      (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === '@ux/spawn'
    );
  } catch {
    return false;
  }
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

/**
 * Arguments that run `program` through the helper:
 * `<helper> <host-pid> [--escalate <socket-path> <token> <fd>] -- <program> <argv0> [args…]`.
 */
export function helperArgs(options: {
  hostPid: number;
  program: string;
  argv0: string;
  args: readonly string[];
  escalation?: SpawnEscalation;
}): string[] {
  const { escalation } = options;
  const escalate = escalation
    ? ['--escalate', escalation.socketPath, escalation.token, String(escalation.fd)]
    : [];
  return [String(options.hostPid), ...escalate, '--', options.program, options.argv0, ...options.args];
}
