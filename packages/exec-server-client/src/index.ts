export {
  ExecServerClient,
  type ExecServerClientOptions,
  ExecServerRequestError,
  type ProcessListener,
} from './exec-server-client.js';
export {
  ExecServerConnectionError,
  type ExecServerConnectionStage,
} from './exec-server-connection-error.js';
export {
  createExecServerSandbox,
  EXEC_SERVER_SANDBOX_LAUNCHER,
  takeSandboxRequest,
} from './exec-server-sandbox.js';
export {
  createExecServerSpawner,
  type ExecServerSpawner,
  type ExecServerSpawnerSettings,
  type ExecServerSpawnRequest,
  withPrependedPath,
} from './exec-server-spawner.js';
export { type ExecServerTransport, TransportEvents } from './exec-server-transport.js';
export { RemoteProcess, type RemoteProcessOptions, SEQ_GAP_REPAIR_MS } from './remote-process.js';
export { type StdioExecServerOptions, spawnStdioExecServer } from './stdio-exec-server-transport.js';
export {
  connectWebSocketExecServer,
  type WebSocketExecServerOptions,
} from './websocket-exec-server-transport.js';
