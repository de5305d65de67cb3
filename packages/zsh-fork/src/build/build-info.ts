import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** `BUILD_INFO.json`, written beside `bin/zsh` by every successful build. */
export interface ZshForkBuildInfo {
  /** `zsh --version`'s number, e.g. "5.9". */
  zshVersion: string;
  /** sha256 of the exec-wrapper patch the binary was built with. */
  patchSha256: string;
  /** ISO date of the build. */
  builtAt: string;
  /** Where the source came from: a path, or "Debian's zsh source package (…/zsh_5.9-4.dsc)". */
  source: string;
  configureArgs: string[];
  platform: string;
  arch: string;
}

export const BUILD_INFO_FILE = 'BUILD_INFO.json';

/** The build info in `outDir`, or undefined when there is none or it cannot be read. */
export function readBuildInfo(outDir: string): ZshForkBuildInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(join(outDir, BUILD_INFO_FILE), 'utf8')) as Partial<ZshForkBuildInfo>;
    if (typeof info.patchSha256 !== 'string' || typeof info.zshVersion !== 'string') return undefined;
    return info as ZshForkBuildInfo;
  } catch {
    return undefined;
  }
}
