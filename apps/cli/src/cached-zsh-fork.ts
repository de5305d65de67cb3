import { dirname } from 'node:path';
import { cachedZshForkPath, readBuildInfo, verifyZshFork, zshForkPatch } from '@ux/zsh-fork';

/** A patched zsh that `npm test` built into `~/.cache/ux/zsh-fork/<patch hash>`, checked as a configured one is. */
export interface CachedZshFork {
  path: string;
  /** It passed the exec-wrapper smoke test and its BUILD_INFO.json names the current patch. */
  usable: boolean;
  version?: string;
  /** Why it is not usable. */
  reason?: string;
}

/**
 * The fork the tests built, unless it is `except` (the one already reported): verified with the
 * same smoke test and patch check as the configured or default one. Nothing uses it until a person
 * points `zsh_fork.zsh_path` at it.
 */
export async function findCachedZshFork(
  env: NodeJS.ProcessEnv,
  except?: string,
): Promise<CachedZshFork | undefined> {
  const path = cachedZshForkPath(env);
  if (!path || path === except) return undefined;
  const verified = await verifyZshFork(path);
  if (!verified.ok) return { path, usable: false, reason: verified.reason };
  const info = readBuildInfo(dirname(dirname(path)));
  if (info?.patchSha256 !== zshForkPatch().sha256)
    return {
      path,
      usable: false,
      reason: info ? 'it was built from another version of the patch' : 'it has no BUILD_INFO.json',
    };
  return { path, usable: true, version: verified.version };
}

/** The config.toml lines that make ux use `path` in ZshFork mode. */
export function useZshForkLines(path: string): string[] {
  return [
    '  [zsh_fork]',
    `  zsh_path = ${JSON.stringify(path)}`,
    '  [features]',
    '  shell_zsh_fork = true          # shell_command runs through the fork',
    '  unified_exec_zsh_fork = true   # and exec_command too',
  ];
}
