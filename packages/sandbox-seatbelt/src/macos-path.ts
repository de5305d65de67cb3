import { posix } from 'node:path';
import { canonicalize, type FsView } from '@ux/protocol-utils';

/** macOS top-level symlinks into `/private`; Seatbelt matches the resolved path, so rules must use the target. */
const PRIVATE_ALIASES = ['/tmp', '/var', '/etc'] as const;

/** `/tmp/x` → `/private/tmp/x` (and `/var`, `/etc`), even when the path does not exist to be resolved. */
export function withPrivatePrefix(path: string): string {
  for (const alias of PRIVATE_ALIASES) {
    if (path === alias || path.startsWith(`${alias}/`)) return `/private${path}`;
  }
  return path;
}

/**
 * The spelling Seatbelt sees for a path: symlinks in the existing part resolved, the `/private` aliases
 * applied. A symlink as the last component is kept as the link, so a protected link is protected itself.
 */
export function macosPath(path: string, fs: FsView): string {
  const resolved =
    fs.kind(path) === 'symlink'
      ? posix.join(canonicalize(posix.dirname(path), fs), posix.basename(path))
      : canonicalize(path, fs);
  return withPrivatePrefix(resolved);
}
