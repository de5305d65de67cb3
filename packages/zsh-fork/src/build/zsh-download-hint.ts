/** Where zsh 5.9's release tarball is published, for the "pass --source" fixes. */
export const ZSH_TARBALL_URL = 'https://www.zsh.org/pub/zsh-5.9.tar.xz';

/** The command a person runs when ux cannot fetch the source itself. */
export const BUILD_WITH_SOURCE_COMMAND = 'ux zsh-fork build --source /path/to/zsh-5.9.tar.xz';

/** The fix text for "no source given and none can be fetched here". */
export function passSourceFix(): string {
  return `download zsh 5.9 (${ZSH_TARBALL_URL}, or its mirror https://sourceforge.net/projects/zsh/files/zsh/5.9/) and run: ${BUILD_WITH_SOURCE_COMMAND}`;
}

export interface BuildHintContext {
  platform: NodeJS.Platform;
  /** Whether `/etc/debian_version` exists. */
  debian: boolean;
  /** Not needed any more: fetching the source changes no system configuration. */
  root?: boolean;
}

/**
 * How to build the patched zsh here, as one line: `ux zsh-fork build` where ux can fetch the source
 * itself (Debian: from the system's mirror, as any user), else the command with `--source` and where
 * to download it.
 */
export function zshForkBuildHint(context: BuildHintContext): string {
  if (context.platform === 'linux' && context.debian) return 'ux zsh-fork build';
  return `${BUILD_WITH_SOURCE_COMMAND} (download it from ${ZSH_TARBALL_URL})`;
}
