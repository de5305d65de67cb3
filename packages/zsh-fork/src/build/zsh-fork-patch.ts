import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PATCH = 'zsh-exec-wrapper.patch';

export interface ZshForkPatch {
  path: string;
  text: string;
  /** Hex sha256 of the patch file: what BUILD_INFO.json records and the test cache is keyed by. */
  sha256: string;
}

/**
 * The exec-wrapper patch shipped in this package's `patches/`. Found beside the sources
 * (`src/build/` → `../../patches`), beside the build (`dist/` → `../patches`), or through the
 * package's own name when this code is bundled into another program (the ux CLI).
 */
export function zshForkPatch(): ZshForkPatch {
  const path = findPatch();
  const text = readFileSync(path, 'utf8');
  return { path, text, sha256: createHash('sha256').update(text).digest('hex') };
}

function findPatch(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, '..', '..', 'patches', PATCH), join(here, '..', 'patches', PATCH)];
  for (const candidate of candidates) if (existsSync(candidate)) return candidate;
  try {
    const pkg = createRequire(import.meta.url).resolve('@ux/zsh-fork/package.json');
    const candidate = join(dirname(pkg), 'patches', PATCH);
    candidates.push(candidate);
    if (existsSync(candidate)) return candidate;
  } catch {
    // Not installed beside this code: reported below.
  }
  throw new Error(
    `the zsh exec-wrapper patch is missing (looked at ${candidates.join(', ')}): reinstall @ux/zsh-fork`,
  );
}
