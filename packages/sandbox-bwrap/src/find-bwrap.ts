import { accessSync, constants, realpathSync, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/**
 * The bwrap binary to use: the configured absolute path (`[sandbox.bwrap] path` in the CLI's config.toml,
 * `bwrapPath` in code), or the first `bwrap` on PATH whose real location is not inside the working
 * directory (a repository must not be able to plant its own). Returns the reason when there is none.
 */
export function findBwrap(options: {
  configured?: string;
  path?: string;
  cwd?: string;
}): { path: string } | { reason: string } {
  if (options.configured !== undefined) {
    // Named as the user writes it: the CLI's config key, not this setting's name in code.
    if (!isAbsolute(options.configured))
      return { reason: `[sandbox.bwrap] path must be an absolute path, got "${options.configured}"` };
    return executable(options.configured)
      ? { path: options.configured }
      : { reason: `[sandbox.bwrap] path ${options.configured} is not an executable file` };
  }
  const cwd = options.cwd ? safeRealpath(options.cwd) : undefined;
  for (const directory of (options.path ?? '').split(delimiter)) {
    if (!directory || !isAbsolute(directory)) continue;
    const candidate = join(directory, 'bwrap');
    if (!executable(candidate)) continue;
    const real = safeRealpath(candidate);
    if (cwd && real && (real === cwd || real.startsWith(`${cwd}/`))) continue;
    return { path: candidate };
  }
  return { reason: `bubblewrap (bwrap) was not found on PATH (${options.path ?? ''})` };
}

function executable(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function safeRealpath(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}
