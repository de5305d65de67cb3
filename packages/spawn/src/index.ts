export { type EarlyExit, waitForEarlyExit } from './early-exit.js';
export {
  ExecServerClient,
  type ExecServerClientOptions,
  ExecServerRequestError,
  type ProcessListener,
} from './exec-server-client.js';
export {
  createExecServerSandbox,
  EXEC_SERVER_SANDBOX_LAUNCHER,
  takeSandboxRequest,
  wireSandboxContext,
} from './exec-server-sandbox.js';
export {
  createExecServerSpawner,
  type ExecServerSpawner,
  type ExecServerSpawnerSettings,
  type ExecServerSpawnRequest,
} from './exec-server-spawner.js';
export { type ExecServerTransport, TransportEvents } from './exec-server-transport.js';
export { exitStatusFrom } from './exit-status.js';
export { HeadTailBuffer } from './head-tail-buffer.js';
export { LineSplitter } from './line-splitter.js';
export { createLocalSpawner, type LocalSpawner, type LocalSpawnerSettings } from './local-spawner.js';
export { OutputTracker } from './output-tracker.js';
export { RemoteProcess, type RemoteProcessOptions, SEQ_GAP_REPAIR_MS } from './remote-process.js';
export { routeToEnvironment } from './route-to-environment.js';
export {
  type CaptureShellSnapshotOptions,
  captureShellSnapshot,
  DEFAULT_SNAPSHOT_TIMEOUT_MS,
  type ShellSnapshot,
  type ShellSnapshotCapture,
} from './shell-snapshot/capture-shell-snapshot.js';
export { isShellSnapshotFresh } from './shell-snapshot/is-shell-snapshot-fresh.js';
export { snapshotCommandScript } from './shell-snapshot/snapshot-command-script.js';
export { snapshotLoginFiles } from './shell-snapshot/snapshot-login-files.js';
export { type SnapshotShellKind, snapshotShellKind } from './shell-snapshot/snapshot-shell-kind.js';
export * from './spawn-constants.js';
export {
  ESCALATION_FD,
  type LocalSpawnRequest,
  type SpawnEscalation,
} from './spawn-escalation.js';
export { decideSpawnKind, type SpawnKind, type SpawnKindInput } from './spawn-kind.js';
export { createSpawnRouter, type RoutedSpawnRequest, type SpawnRouter } from './spawn-router.js';
export { type StdioExecServerOptions, spawnStdioExecServer } from './stdio-exec-server-transport.js';
export {
  connectWebSocketExecServer,
  type WebSocketExecServerOptions,
} from './websocket-exec-server-transport.js';
