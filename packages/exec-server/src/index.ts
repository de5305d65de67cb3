export { bearerMatches, tokenDigest, tokenDigestFromFile } from './capability-token.js';
export type { ConnectionHandler, ServerConnection } from './connection-handler.js';
export { createExecServer, type ExecServer, type ExecServerOptions } from './exec-server.js';
export * from './exec-server-constants.js';
export { EXEC_SERVER_VERSION } from './exec-server-version.js';
export type { HostedProcess, HostedProcessInfo } from './hosted-process.js';
export { listenWebSocket, type WebSocketListener, type WebSocketListenOptions } from './listen-websocket.js';
export {
  type ExecServerIo,
  type ExecServerListen,
  type ExecServerSettings,
  type RunExecServerDependencies,
  runExecServer,
} from './run-exec-server.js';
export { type StdioStreams, serveStdio } from './serve-stdio.js';
