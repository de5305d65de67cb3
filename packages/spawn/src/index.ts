// The head/tail buffer lives in `@ux/protocol` (remote processes use it too); re-exported for the door.
export { HeadTailBuffer } from '@ux/protocol-utils';
export { type EarlyExit, waitForEarlyExit } from './early-exit.js';
export { exitStatusFrom } from './exit-status.js';
export {
  type EpollTarget,
  type FileIdentity,
  type InputIdentity,
  type InputWaitOptions,
  MAX_PROCESSES_PROBED,
  type ProcReader,
  type ProcStat,
  type ProcSyscall,
  parseEpollTargets,
  parseProcStat,
  parseProcSyscall,
  probeInputWait,
  READ_SYSCALLS,
  type ReadCall,
  readCallOf,
} from './input-wait.js';
export { type LaunchPlannedOptions, launchPlanned, type PlannedLaunch } from './launch-planned.js';
export { createLocalSpawner, type LocalSpawner, type LocalSpawnerSettings } from './local-spawner.js';
export { OutputTracker } from './output-tracker.js';
export { procReader } from './proc-reader.js';
export {
  type CaptureShellSnapshotOptions,
  captureShellSnapshot,
  DEFAULT_SNAPSHOT_TIMEOUT_MS,
  type ShellSnapshot,
  type ShellSnapshotCapture,
  snapshotWatchedFiles,
} from './shell-snapshot/capture-shell-snapshot.js';
export { isShellSnapshotFresh, stampLoginFiles } from './shell-snapshot/is-shell-snapshot-fresh.js';
export {
  type CachedShellSnapshot,
  fileIdentity,
  ShellSnapshotCache,
  type ShellSnapshotCacheKey,
  type ShellSnapshotCacheKeyInput,
  type ShellSnapshotCacheLookup,
  type ShellSnapshotCacheOptions,
  shellSnapshotCacheKey,
} from './shell-snapshot/shell-snapshot-cache.js';
export { snapshotCommandScript } from './shell-snapshot/snapshot-command-script.js';
export { snapshotLoginFiles } from './shell-snapshot/snapshot-login-files.js';
export { type SnapshotShellKind, snapshotShellKind } from './shell-snapshot/snapshot-shell-kind.js';
export { snapshotSourcedFiles } from './shell-snapshot/snapshot-sourced-files.js';
export * from './spawn-constants.js';
export {
  ESCALATION_FD,
  type LocalSpawnRequest,
  type SpawnEscalation,
} from './spawn-escalation.js';
export { decideSpawnKind, type SpawnKind, type SpawnKindInput } from './spawn-kind.js';
export {
  STATUS_CONTROL_C_EXIT,
  WINDOWS_TERMINATE_EXIT_CODE,
  windowsExitStatus,
} from './windows-exit-status.js';
export type { WindowsJob, WindowsJobObjects } from './windows-job-objects.js';
export {
  nodeWindowsPathKind,
  type WindowsPathKind,
  windowsEnvValue,
  windowsProgramPath,
} from './windows-program-path.js';
export type { WindowsPty } from './windows-pty-process.js';
export {
  planWindowsSpawn,
  WINDOWS_MAX_COMMAND_LINE,
  type WindowsPipeSpawnOptions,
  type WindowsPtySpawnOptions,
  type WindowsSpawnPlan,
} from './windows-spawn-plan.js';
export {
  createWindowsSpawner,
  type WindowsSpawner,
  type WindowsSpawnerSettings,
} from './windows-spawner.js';
