import { homedir, tmpdir } from 'node:os';
import { basename } from 'node:path';
import { type EnvironmentInfo, UX_EXEC_SERVER_CAPABILITIES } from '@ux/protocol';
import { fileUriFromPath } from '@ux/protocol-utils';

export interface EnvironmentFacts {
  version: string;
  serverEnv: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
  /** Whether a `sandbox` request can be honoured here (a backend's probe passed). */
  sandboxing: boolean;
  /** Whether `process/start` accepts `shellSnapshot` (Codex's `shellSnapshotV2`). */
  shellSnapshots: boolean;
  /** Helper directories clients put first on PATH (absolute paths here). */
  prependPathDirs?: readonly string[];
}

/**
 * What `initialize` and `environment/info` report. Only the capabilities this server implements are
 * advertised: of Codex's optional ones only `shellSnapshotV2` (so a Codex client never sends
 * `fs/watchMissing` or `environmentConfig/read`), plus ux's own extensions.
 */
export function environmentInfo(facts: EnvironmentFacts): EnvironmentInfo {
  const shellPath = facts.serverEnv.SHELL || '/bin/bash';
  return {
    shell: { name: basename(shellPath), path: shellPath },
    executorVersion: facts.version,
    cwd: fileUriFromPath(process.cwd()),
    userHomeDir: fileUriFromPath(homedir()),
    platformOs:
      facts.platform === 'darwin' ? 'macos' : facts.platform === 'win32' ? 'windows' : facts.platform,
    prependPathDirs: (facts.prependPathDirs ?? []).map(fileUriFromPath),
    temporaryDirectories: [],
    tempDir: fileUriFromPath(tmpdir()),
    capabilities: {
      shellSnapshotV2: facts.shellSnapshots,
      [UX_EXEC_SERVER_CAPABILITIES.processResize]: true,
      [UX_EXEC_SERVER_CAPABILITIES.sandboxedProcesses]: facts.sandboxing,
    },
  };
}
