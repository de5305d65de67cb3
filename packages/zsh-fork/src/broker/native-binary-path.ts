import { accessSync, constants, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SpawnFailedError } from '@ux/protocol/core';

/** The native programs this package builds into `native/build/`. */
export type ZshForkNativeBinary = 'ux-execve-wrapper' | 'ux-escalate-broker';

/** Where the build puts one of this package's native programs. */
export function nativeBinaryPath(name: ZshForkNativeBinary): string {
  return join(zshForkPackageDir(), 'native', 'build', name);
}

/** The built execve wrapper (`EXEC_WRAPPER` for the patched zsh). */
export function defaultWrapperPath(): string {
  return nativeBinaryPath('ux-execve-wrapper');
}

/** The built escalation broker (the native sidecar `startEscalationBroker` runs). */
export function defaultBrokerPath(): string {
  return nativeBinaryPath('ux-escalate-broker');
}

/** `path` when it is an executable file, or a clear error saying how to build it. */
export function checkedNativePath(path: string, what: string): string {
  try {
    accessSync(path, constants.X_OK);
    return path;
  } catch {
    throw new SpawnFailedError({
      command: [path],
      path,
      reason: `${what} is not built. Run \`pnpm --filter @ux/zsh-fork build\` (needs a C compiler)`,
    });
  }
}

let packageDir: string | undefined;

/**
 * This package's directory: found from this module upwards (sources: `src/broker/`, build: `dist/`),
 * else the `node_modules/@ux/zsh-fork` nearest above a bundle that inlined this code (the ux CLI),
 * else the resolver.
 */
function zshForkPackageDir(): string {
  packageDir ??= findPackageDir();
  return packageDir;
}

function findPackageDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (let dir = here, up = 0; up < 3; dir = dirname(dir), up++) {
    if (isZshForkPackage(dir)) return dir;
  }
  for (let dir = here; dirname(dir) !== dir; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', '@ux', 'zsh-fork');
    if (isZshForkPackage(candidate)) return candidate;
  }
  return dirname(createRequire(import.meta.url).resolve('@ux/zsh-fork/package.json'));
}

function isZshForkPackage(dir: string): boolean {
  try {
    return (
      (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name ===
      '@ux/zsh-fork'
    );
  } catch {
    return false;
  }
}
