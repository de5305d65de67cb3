import { accessSync, constants, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SandboxUnavailableError } from '@ux/protocol/core';

/** The native programs this package builds (`scripts/build-native.mjs`). */
export type NativeBinaryName = 'ux-path-guard' | 'ux-sandbox-exec';

const PACKAGE_NAME = '@ux/sandbox-bwrap';
let packageDir: string | undefined;

/** Where the build puts `name`: `native/build/<name>` in this package. */
export function nativeBinaryPath(name: NativeBinaryName): string {
  packageDir ??= bwrapPackageDir();
  return join(packageDir, 'native', 'build', name);
}

/** The path of `name`, or a SandboxUnavailableError saying how to build it when it is not executable. */
export function checkedNativeBinary(name: NativeBinaryName): string {
  const path = nativeBinaryPath(name);
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    throw new SandboxUnavailableError({
      backend: 'bwrap',
      reason: `${name} is not built (no executable at ${path})`,
      fix: 'run `pnpm --filter @ux/sandbox-bwrap build` (needs a C compiler: apt-get install build-essential)',
    });
  }
}

/**
 * This package's directory: one level above this module in its own build and sources; when an
 * application bundles this code (the ux CLI does), the `node_modules/@ux/sandbox-bwrap` nearest above
 * the bundle. A few file reads, where `require.resolve` costs milliseconds of a CLI's start-up; the
 * resolver remains the answer for any other layout.
 */
function bwrapPackageDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  if (isBwrapPackage(dirname(here))) return dirname(here);
  for (let dir = here; dirname(dir) !== dir; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', '@ux', 'sandbox-bwrap');
    if (isBwrapPackage(candidate)) return candidate;
  }
  return dirname(createRequire(import.meta.url).resolve(`${PACKAGE_NAME}/package.json`));
}

function isBwrapPackage(dir: string): boolean {
  try {
    return (
      (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name ===
      PACKAGE_NAME
    );
  } catch {
    return false;
  }
}
